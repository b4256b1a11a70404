package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
)

// --drain-order and --drain-order-file: good rules reach the settings (the flag's first,
// then the file's); a bad one is a usage error (exit 2) of one line naming it.
func TestDrainOrderFlags(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte("- selector: {matchLabels: {app: backup}}\n  behavior: WaitCompleted\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("- selector: {matchLabels: {app: backup}}\n  behavior: Later\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		flag, file string
		rules      int
		wantErr    string
	}{
		"none":                {rules: 0},
		"the flag":            {flag: "app=fluentd:10,app=etcd:wait-completed", rules: 2},
		"the flag, then file": {flag: "app=fluentd:10", file: good, rules: 2},
		"a bad value":         {flag: "app=fluentd:first", wantErr: `invalid --drain-order: "app=fluentd:first": want an order (an integer) or skip, wait-completed, not "first"`},
		"no value":            {flag: "app=fluentd", wantErr: `invalid --drain-order: "app=fluentd": want SELECTOR:ORDER or SELECTOR:skip|wait-completed`},
		"a missing file":      {file: filepath.Join(dir, "nope.yaml"), wantErr: "invalid --drain-order-file: open "},
		"a bad file":          {file: bad, wantErr: `invalid --drain-order-file ` + bad + `: drain order rule #1: unknown behavior "Later"`},
	} {
		t.Run(name, func(t *testing.T) {
			o := DrainRuleOptions{DrainOrderFlags: DrainOrderFlags{DrainOrder: tc.flag, DrainOrderFile: tc.file}}
			var set drain.Settings
			err := o.validateRules(&set)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error %v, want one line starting %q", err, tc.wantErr)
				}
				if ExitCode(err) != ExitUsage {
					t.Fatalf("exit %d, want %d", ExitCode(err), ExitUsage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(set.DrainOrder) != tc.rules {
				t.Fatalf("%d rules, want %d", len(set.DrainOrder), tc.rules)
			}
		})
	}
}

// drain --server-side carries --drain-order into the Maintenance's spec.drain.order.
func TestServerSideCarriesTheDrainOrder(t *testing.T) {
	o := NewDrainOptions(&Common{})
	o.DrainOrder = "app=fluentd:10,app=backup:wait-completed"
	if err := o.validateDrainOrder(&o.Settings); err != nil {
		t.Fatal(err)
	}
	spec := o.maintenanceSpec("Drain")
	var got []string
	for _, r := range spec.Drain.Order {
		order := "-"
		if r.Order != nil {
			order = strconv.Itoa(int(*r.Order))
		}
		got = append(got, r.Selector.MatchLabels["app"]+":"+order+":"+r.Behavior)
	}
	if want := "fluentd:10:|backup:-:WaitCompleted"; strings.Join(got, "|") != want {
		t.Fatalf("spec.drain.order %q, want %q", strings.Join(got, "|"), want)
	}
}
