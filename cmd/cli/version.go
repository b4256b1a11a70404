package cli

import (
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/buildinfo"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/completion"
)

// Build stamps. A release build sets them with
//
//	-ldflags "-X <module>/cmd/cli.version=v0.2.0 -X <module>/cmd/cli.commit=<sha> -X <module>/cmd/cli.date=<RFC 3339>"
//
// and init fills whatever is left empty from the Go build information, so `go install
// ...@v0.2.0` reports v0.2.0 and `go build` in a clone reports its commit and time.
var (
	version string
	commit  string
	date    string
)

func init() {
	bi, _ := debug.ReadBuildInfo()
	version, commit, date = buildinfo.Resolve(version, commit, date, bi)
}

// VersionOptions is the "version" command.
type VersionOptions struct {
	*Common
	// ClientOnly skips asking the server for its version.
	ClientOnly bool
	// Output is "", "json" or "yaml".
	Output string
}

// NewCmdVersion builds "kubectl maintenance version".
func NewCmdVersion(c *Common) *cobra.Command {
	o := &VersionOptions{Common: c}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version (and the server's, without --client)",
		Example: `  kubectl maintenance version --client
  kubectl maintenance version -o json`,
		Args: noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	cmd.Flags().BoolVar(&o.ClientOnly, "client", o.ClientOnly, "print the client version only (no server needed)")
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "output format: json or yaml (default: text)")
	_ = cmd.RegisterFlagCompletionFunc("output", completion.FixedChoices("json", "yaml"))
	return cmd
}

// Validate checks the output format.
func (o *VersionOptions) Validate() error {
	switch o.Output {
	case "", "json", "yaml":
		return nil
	}
	return UsageErrorf("--output must be json or yaml, got %q", o.Output)
}

// Run prints the client's version and, unless ClientOnly, the server's. When the server
// cannot be reached the client's part is still printed and the error returned.
func (o *VersionOptions) Run() error {
	doc := buildinfo.Document{ClientVersion: buildinfo.Client(version, commit, date)}
	var serverErr error
	if !o.ClientOnly {
		cs, err := o.Client()
		if err == nil {
			doc.ServerVersion, err = buildinfo.Server(cs.Discovery())
		}
		serverErr = err
	}
	if err := buildinfo.Write(o.Out, o.Output, doc); err != nil {
		return err
	}
	return serverErr
}
