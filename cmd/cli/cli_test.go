package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/completion"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
)

type blocked struct{}

func (blocked) Error() string { return "blocked" }
func (blocked) Blocked() bool { return true }

func TestExitCode(t *testing.T) {
	tests := map[string]struct {
		err  error
		want int
	}{
		"no error is 0":                              {nil, ExitOK},
		"a usage error is 2":                         {UsageErrorf("bad"), ExitUsage},
		"a wrapped usage error is still 2":           {fmt.Errorf("x: %w", UsageErrorf("bad")), ExitUsage},
		"blocked by policy is 3":                     {blocked{}, ExitBlocked},
		"an unknown node is 2":                       {&drain.NodeNotFoundError{Name: "n"}, ExitUsage},
		"a drain timeout is 124":                     {&drain.TimeoutError{}, ExitTimeout},
		"an interrupted drain is 130":                {&drain.InterruptedError{}, ExitInterrupted},
		"a deadline is 124":                          {context.DeadlineExceeded, ExitTimeout},
		"anything else is 1":                         {errors.New("boom"), ExitError},
		"a preflight refusal is 3 (nothing changed)": {&drain.PreflightError{Problems: []string{"x"}}, ExitBlocked},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := ExitCode(tc.err); got != tc.want {
				t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
}

// run executes the root command with args and no cluster, returning stdout, stderr and
// the exit code.
func run(args ...string) (string, string, int) {
	var out, errOut bytes.Buffer
	root := NewRootCmd(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		PrintError(&errOut, err)
	}
	return out.String(), errOut.String(), ExitCode(err)
}

func TestBadInputIsOneLineAndExit2(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"names and a selector":        {[]string{"drain", "n1", "-l", "a=b"}, "only one of them"},
		"no nodes":                    {[]string{"drain"}, "no nodes given"},
		"a bad selector":              {[]string{"drain", "-l", "a in ("}, "invalid --selector"},
		"disable-eviction":            {[]string{"drain", "n1", "--disable-eviction"}, "never bypasses PodDisruptionBudgets"},
		"an unknown output":           {[]string{"drain", "n1", "-o", "yaml"}, `invalid --output "yaml"`},
		"a bad dry-run":               {[]string{"drain", "n1", "--dry-run=maybe"}, `invalid --dry-run "maybe"`},
		"a bad duration":              {[]string{"drain", "n1", "--timeout", "soon"}, `invalid --timeout "soon": must be a duration`},
		"a bad boolean":               {[]string{"drain", "n1", "--force=maybe"}, `invalid --force "maybe": must be true or false`},
		"a bad number":                {[]string{"drain", "n1", "--grace-period=soon"}, `invalid --grace-period "soon": must be a whole number`},
		"a bad verbosity":             {[]string{"nodes", "-v", "loud"}, `invalid -v "loud": must be a whole number`},
		"a dry-run mode for a switch": {[]string{"pool", "delete", "blue", "--dry-run=server"}, `invalid --dry-run "server": kubectl maintenance pool delete's dry run is a switch`},
		"a bad request timeout":       {[]string{"nodes", "--request-timeout", "abc"}, `invalid --request-timeout "abc"`},
		"an unknown shell":            {[]string{"completion", "tcsh"}, `no completion for "tcsh": the shells are bash, fish, kubectl, powershell, zsh`},
		"an argument to a shell":      {[]string{"completion", "bash", "extra"}, `completion bash takes no arguments`},
		"an unknown flag":             {[]string{"plan", "n1", "--bogus"}, "unknown flag: --bogus"},
		"a missing kubeconfig":        {[]string{"nodes", "--kubeconfig", "/nonexistent/kubeconfig"}, "invalid kubeconfig"},
		"move without --to":           {[]string{"pool", "move", "n1"}, "--to POOL is required"},
		"a bad progress mode":         {[]string{"drain", "n1", "--progress", "fancy"}, `invalid --progress "fancy"`},
		"zero parallel nodes":         {[]string{"drain", "n1", "--max-parallel-nodes", "0"}, "--max-parallel-nodes must be at least 1"},
		"pool get with a bad -o":      {[]string{"pool", "get", "a", "-o", "xml"}, "unable to match a printer"},
		"the dashboard without a tty": {[]string{"dashboard"}, "needs a terminal"},
		"a zero --qps":                {[]string{"nodes", "--qps", "0"}, "--qps must be a number above 0, got 0"},
		"a negative --qps":            {[]string{"drain", "n1", "--qps", "-5"}, "--qps must be a number above 0, got -5"},
		"a --qps that is no number":   {[]string{"cordon", "n1", "--qps", "fast"}, `invalid --qps "fast": must be a number`},
		"a zero --burst":              {[]string{"pool", "get", "--burst", "0"}, "--burst must be 1 or more, got 0"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, errOut, code := run(tc.args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want 2 (stderr %q)", code, errOut)
			}
			if !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("stderr = %q, want one line containing %q", errOut, tc.want)
			}
		})
	}
}

func TestKubectlCompletionScript(t *testing.T) {
	out, _, code := run("completion", "kubectl")
	if code != 0 || out != completion.KubectlScript {
		t.Errorf("completion kubectl = %q (exit %d)", out, code)
	}
}

func TestUnknownCommandIsAUsageErrorWithKubectlsHint(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"a mistyped command":         {[]string{"drian"}, `error: unknown command "drian" for "kubectl maintenance"; did you mean "drain"? See 'kubectl maintenance --help' for usage.`},
		"an unknown pool command":    {[]string{"pool", "xyz"}, `error: unknown command "xyz" for "kubectl maintenance pool". See 'kubectl maintenance pool --help' for usage.`},
		"two possible pool commands": {[]string{"pool", "lst"}, `did you mean one of ["get" "list"]?`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, errOut, code := run(tc.args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 || strings.Contains(errOut, "; ;") {
				t.Errorf("stderr = %q, want one line with %q", errOut, tc.want)
			}
		})
	}
	if out, _, code := run("pool"); code != 0 || !strings.Contains(out, "Available Commands") {
		t.Errorf("pool alone: exit %d, want its help", code)
	}
}
