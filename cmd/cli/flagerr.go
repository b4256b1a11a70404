package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

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
