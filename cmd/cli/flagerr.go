package cli

import (
	"errors"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"
)

// flagError turns a flag the command line got wrong into a usage error (exit 2) that
// names the flag and what it takes, instead of the parser's words
// (`strconv.ParseBool: parsing "server": invalid syntax`).
func flagError(cmd *cobra.Command, err error) error {
	var iv *pflag.InvalidValueError
	if !errors.As(err, &iv) {
		return WithExitCode(ExitUsage, err)
	}
	f, v := iv.GetFlag(), iv.GetValue()
	name := "--" + f.Name
	if len(f.Name) == 1 { // klog's -v
		name = "-" + f.Name
	}
	var num *strconv.NumError
	typ := f.Value.Type()
	if errors.As(err, &num) && typ != "bool" && num.Func != "ParseBool" && !strings.HasPrefix(typ, "float") {
		typ = "int"
	}
	switch typ {
	case "bool":
		if f.Name == "dry-run" {
			return UsageErrorf("invalid %s %q: %s's dry run is a switch, --dry-run (or --dry-run=false); it has no client or server mode",
				name, v, cmd.CommandPath())
		}
		return UsageErrorf("invalid %s %q: must be true or false", name, v)
	case "duration":
		return UsageErrorf("invalid %s %q: must be a duration such as 90s, 5m or 1h", name, v)
	case "int", "int32", "int64", "uint", "uint32", "uint64":
		return UsageErrorf("invalid %s %q: must be a whole number", name, v)
	case "float32", "float64":
		return UsageErrorf("invalid %s %q: must be a number", name, v)
	}
	return UsageErrorf("invalid %s %q: %v", name, v, errors.Unwrap(iv))
}

// checkClusterFlags checks the kubectl cluster flags whose values client-go parses only
// when it loads the kubeconfig, so that a bad value is named as itself rather than as an
// invalid kubeconfig.
func checkClusterFlags(f *genericclioptions.ConfigFlags) error {
	if f == nil || f.Timeout == nil || *f.Timeout == "" {
		return nil
	}
	if _, err := clientcmd.ParseTimeout(*f.Timeout); err != nil || strings.HasPrefix(*f.Timeout, "-") {
		return UsageErrorf("invalid --request-timeout %q: must be a duration such as 30s or 1m, or a whole number of seconds (0: none)", *f.Timeout)
	}
	return nil
}

// completionArgs makes an argument given to a shell's completion command a usage error
// (cobra's own check is exit 1).
func completionArgs(completion *cobra.Command) {
	for _, sh := range completion.Commands() {
		sh.Args = noArgsUsage
	}
}

// completionShellArg makes an unknown shell given to completion a usage error that
// lists the shells, instead of the help and exit 0.
func completionShellArg(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	var shells []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			shells = append(shells, c.Name())
		}
	}
	return UsageErrorf("no completion for %q: the shells are %s. See '%s --help' for usage.", args[0], strings.Join(shells, ", "), cmd.CommandPath())
}
