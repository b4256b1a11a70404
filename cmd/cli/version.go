package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
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
	version, commit, date = resolveBuild(version, commit, date, bi)
}

// unknown is what a field says when neither the ldflags nor the build information tell.
const unknown = "unknown"

// resolveBuild completes the stamped values from the build information: the main module's
// version (set by `go install pkg@version`, or a pseudo-version from the VCS), vcs.revision
// (with "-dirty" when vcs.modified) and vcs.time.
func resolveBuild(v, c, d string, bi *debug.BuildInfo) (string, string, string) {
	settings := map[string]string{}
	if bi != nil {
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		if v == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
	}
	if c == "" {
		if c = settings["vcs.revision"]; c != "" && settings["vcs.modified"] == "true" {
			c += "-dirty"
		}
	}
	if d == "" {
		d = settings["vcs.time"]
	}
	if v == "" {
		v = "devel"
	}
	if c == "" {
		c = unknown
	}
	if d == "" {
		d = unknown
	}
	return v, c, d
}

// BuildInfo is what the plugin says about itself.
type BuildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// ClientBuildInfo returns this binary's build information.
func ClientBuildInfo() BuildInfo {
	return BuildInfo{Version: version, Commit: commit, Date: date, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
}

// ServerVersion is the part of the server's /version that the command shows.
type ServerVersion struct {
	GitVersion string `json:"gitVersion"`
	Platform   string `json:"platform,omitempty"`
}

// versionOutput is the document of `version -o json|yaml`, shaped like kubectl's.
type versionOutput struct {
	ClientVersion BuildInfo      `json:"clientVersion"`
	ServerVersion *ServerVersion `json:"serverVersion,omitempty"`
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
	_ = cmd.RegisterFlagCompletionFunc("output", fixedChoices("json", "yaml"))
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
	out := versionOutput{ClientVersion: ClientBuildInfo()}
	var serverErr error
	if !o.ClientOnly {
		out.ServerVersion, serverErr = o.serverVersion()
	}
	if err := writeVersion(o.Out, o.Output, out); err != nil {
		return err
	}
	return serverErr
}

func (o *VersionOptions) serverVersion() (*ServerVersion, error) {
	cs, err := o.Client()
	if err != nil {
		return nil, err
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("get server version: %w", err)
	}
	return &ServerVersion{GitVersion: v.GitVersion, Platform: v.Platform}, nil
}

func writeVersion(w io.Writer, format string, out versionOutput) error {
	switch format {
	case "json":
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return fmt.Errorf("encode version: %w", err)
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(out)
		if err != nil {
			return fmt.Errorf("encode version: %w", err)
		}
		_, err = w.Write(b)
		return err
	}
	c := out.ClientVersion
	if _, err := fmt.Fprintf(w, "Client Version: %s (commit %s, built %s, %s %s)\n", c.Version, c.Commit, c.Date, c.GoVersion, c.Platform); err != nil {
		return err
	}
	if out.ServerVersion != nil {
		if _, err := fmt.Fprintf(w, "Server Version: %s\n", out.ServerVersion.GitVersion); err != nil {
			return err
		}
	}
	return nil
}
