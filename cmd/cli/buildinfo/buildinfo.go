// Package buildinfo is what the plugin says about itself: its version, commit and build
// date (stamped at build time, completed from Go's build information), the Go version and
// platform, and the server's version beside them, as the version command prints them
// (text, JSON or YAML, shaped like kubectl's).
//
// The stamps themselves stay in cmd/cli (the release's -ldflags -X name them there).
package buildinfo

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"
)

// Unknown is what a field says when neither the stamps nor the build information tell.
const Unknown = "unknown"

// Resolve completes the stamped values (version v, commit c, date d) from the build
// information bi: the main module's version (set by `go install pkg@version`, or a
// pseudo-version from the VCS), vcs.revision (with "-dirty" when vcs.modified) and
// vcs.time. A stamped value wins; what is still unknown is "devel" (the version) or
// Unknown.
func Resolve(v, c, d string, bi *debug.BuildInfo) (string, string, string) {
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
		c = Unknown
	}
	if d == "" {
		d = Unknown
	}
	return v, c, d
}

// Info is what the plugin says about itself.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Client is this binary's Info from its (resolved) stamps.
func Client(version, commit, date string) Info {
	return Info{Version: version, Commit: commit, Date: date, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
}

// ServerVersion is the part of the server's /version that the command shows.
type ServerVersion struct {
	GitVersion string `json:"gitVersion"`
	Platform   string `json:"platform,omitempty"`
}

// Server asks the API server for its version.
func Server(d discovery.ServerVersionInterface) (*ServerVersion, error) {
	v, err := d.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("get server version: %w", err)
	}
	return &ServerVersion{GitVersion: v.GitVersion, Platform: v.Platform}, nil
}

// Document is what `version -o json|yaml` prints, shaped like kubectl's.
type Document struct {
	ClientVersion Info           `json:"clientVersion"`
	ServerVersion *ServerVersion `json:"serverVersion,omitempty"`
}

// Write writes doc in format: "json", "yaml", or anything else as text ("Client
// Version: ..." and, when known, "Server Version: ...").
func Write(w io.Writer, format string, doc Document) error {
	switch format {
	case "json":
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return fmt.Errorf("encode version: %w", err)
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(doc)
		if err != nil {
			return fmt.Errorf("encode version: %w", err)
		}
		_, err = w.Write(b)
		return err
	}
	c := doc.ClientVersion
	if _, err := fmt.Fprintf(w, "Client Version: %s (commit %s, built %s, %s %s)\n", c.Version, c.Commit, c.Date, c.GoVersion, c.Platform); err != nil {
		return err
	}
	if doc.ServerVersion != nil {
		if _, err := fmt.Fprintf(w, "Server Version: %s\n", doc.ServerVersion.GitVersion); err != nil {
			return err
		}
	}
	return nil
}
