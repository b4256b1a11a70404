// Command release builds the plugin's release into a directory (dist/ by default): one
// archive per platform (tar.gz; zip for windows) holding the binary and LICENSE, a
// checksums.txt (sha256) and the krew manifest plugins/maintenance.yaml generated from the
// archives. The binaries are static (CGO_ENABLED=0), built with -trimpath and
// -ldflags "-s -w" and stamped with the version, commit and date that `kubectl
// maintenance version` reports. `make release VERSION=vX.Y.Z` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
)

// Targets are the platforms of a release.
var Targets = []Target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// semver is the shape krew requires of spec.version: "v" and a semantic version.
var semver = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

func main() {
	var (
		o       Options
		targets string
	)
	flag.StringVar(&o.Version, "version", "", "release version, vMAJOR.MINOR.PATCH (required)")
	flag.StringVar(&o.Commit, "commit", "", "commit to stamp (default: git rev-parse HEAD, -dirty when the tree has changes)")
	flag.StringVar(&o.Date, "date", "", "build date to stamp, RFC 3339 (default: the commit's time, so builds are reproducible)")
	flag.StringVar(&o.Out, "out", "dist", "output directory (earlier release files in it are removed)")
	flag.StringVar(&o.Repo, "repo", DefaultRepo, "GitHub repository URL: the manifest's homepage and the base of its download URIs")
	flag.StringVar(&targets, "targets", "", "comma-separated os/arch list (default: all six)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o, targets); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o Options, targets string) error {
	if !semver.MatchString(o.Version) {
		return fmt.Errorf("-version %q is not a semantic version with a leading v (e.g. v0.2.0)", o.Version)
	}
	ts := Targets
	if targets != "" {
		ts = nil
		for _, s := range strings.Split(targets, ",") {
			osName, arch, ok := strings.Cut(strings.TrimSpace(s), "/")
			if !ok || osName == "" || arch == "" {
				return fmt.Errorf("-targets: %q is not os/arch", s)
			}
			ts = append(ts, Target{osName, arch})
		}
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	if err := o.fillFromGit(ctx, root); err != nil {
		return err
	}
	if !filepath.IsAbs(o.Out) {
		o.Out = filepath.Join(root, o.Out)
	}
	if err := cleanRelease(o.Out); err != nil {
		return err
	}
	var archives []Archive
	for _, t := range ts {
		a, err := BuildArchive(ctx, root, o, t)
		if err != nil {
			return err
		}
		fmt.Printf("%s\t%s\t%.1f MiB\n", a.Name, a.SHA256, float64(a.Size)/(1<<20))
		archives = append(archives, a)
	}
	if err := WriteChecksums(filepath.Join(o.Out, "checksums.txt"), archives); err != nil {
		return err
	}
	manifest, err := KrewManifest(o, archives)
	if err != nil {
		return err
	}
	path := filepath.Join(o.Out, "plugins", PluginName+".yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	if err := os.WriteFile(path, manifest, 0o644); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	fmt.Printf("wrote %d archive(s), checksums.txt and plugins/%s.yaml to %s\n", len(archives), PluginName, o.Out)
	return nil
}

// cleanRelease removes an earlier release's files from dir (archives of any version,
// checksums.txt, plugins/) and leaves anything else there (the image tarball).
func cleanRelease(dir string) error {
	old, _ := filepath.Glob(filepath.Join(dir, BinaryName+"_*"))
	old = append(old, filepath.Join(dir, "checksums.txt"), filepath.Join(dir, "plugins"))
	for _, p := range old {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("clean %s: %w", dir, err)
		}
	}
	return nil
}
