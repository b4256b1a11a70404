package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X .../cmd/cli.version=v0.1.0".
var version = "v0.1.0-dev"

// VersionOptions is the "version" command.
type VersionOptions struct {
	*Common
	// ClientOnly skips asking the server for its version.
	ClientOnly bool
}

// NewCmdVersion builds "kubectl maintenance version".
func NewCmdVersion(c *Common) *cobra.Command {
	o := &VersionOptions{Common: c}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version and the server's",
		Args:  noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(o.Out, "Client Version: kubectl-maintenance %s (%s)\n", version, runtime.Version())
			if o.ClientOnly {
				return nil
			}
			cs, err := o.Client()
			if err != nil {
				return err
			}
			v, err := cs.Discovery().ServerVersion()
			if err != nil {
				return fmt.Errorf("get server version: %w", err)
			}
			fmt.Fprintf(o.Out, "Server Version: %s\n", v.GitVersion)
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.ClientOnly, "client", o.ClientOnly, "print the client version only")
	return cmd
}
