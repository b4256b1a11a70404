package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
)

var stamp = Options{
	Version: "v0.2.0-rc.1",
	Commit:  "0123456789abcdef0123456789abcdef01234567",
	Date:    "2026-11-24T08:00:00Z",
	Repo:    DefaultRepo,
}

// TestHostArchiveInstallsAndReportsItsStamp does what a user does with a release: unpack
// the archive for this machine, put it on PATH, ask for the version through kubectl's
// plugin lookup, and check the krew manifest built from it.
func TestHostArchiveInstallsAndReportsItsStamp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin (about a minute on a loaded machine); not in -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	o := stamp
	o.Out = t.TempDir()
	host := Target{runtime.GOOS, runtime.GOARCH}
	a, err := BuildArchive(ctx, root, o, host)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %.1f MiB", a.Name, float64(a.Size)/(1<<20))

	// The archive holds exactly the binary and LICENSE.
	bin := t.TempDir()
	names := unpack(t, a.Path, bin)
	if want := []string{host.Bin(), "LICENSE"}; strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("archive holds %v, want %v", names, want)
	}
	license, _ := os.ReadFile(filepath.Join(root, "LICENSE"))
	if got, _ := os.ReadFile(filepath.Join(bin, "LICENSE")); !bytes.Equal(got, license) || len(got) == 0 {
		t.Errorf("LICENSE in the archive differs from the repository's")
	}

	// The user's PATH: the unpacked directory and, for `kubectl maintenance`, kubectl.
	path := bin
	tools, err := cluster.Binaries(ctx)
	if err != nil {
		t.Fatalf("kubectl for the plugin lookup: %v", err)
	}
	path += string(os.PathListSeparator) + tools
	for _, argv := range [][]string{
		{"kubectl", "maintenance", "version", "--client", "-o", "json"},
		{BinaryName, "version", "--client", "-o", "json"},
	} {
		t.Run(strings.Join(argv[:2], " "), func(t *testing.T) {
			exe, err := lookPath(argv[0], path)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.CommandContext(ctx, exe, argv[1:]...)
			cmd.Env = append(os.Environ(), "PATH="+path, "HOME="+t.TempDir(), "KUBECONFIG="+filepath.Join(t.TempDir(), "none"))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %v\n%s", argv, err, stderr.String())
			}
			var doc struct {
				ClientVersion map[string]string `json:"clientVersion"`
				ServerVersion any               `json:"serverVersion"`
			}
			if err := json.Unmarshal(out, &doc); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out)
			}
			want := map[string]string{"version": o.Version, "commit": o.Commit, "date": o.Date, "platform": host.String()}
			for k, v := range want {
				if doc.ClientVersion[k] != v {
					t.Errorf("clientVersion.%s = %q, want %q", k, doc.ClientVersion[k], v)
				}
			}
			if doc.ServerVersion != nil {
				t.Errorf("--client printed a server version: %v", doc.ServerVersion)
			}
		})
	}

	// The manifest generated from this archive.
	b, err := KrewManifest(o, []Archive{a})
	if err != nil {
		t.Fatal(err)
	}
	validateManifest(t, b, o, []Archive{a})

	// checksums.txt is what sha256sum -c reads.
	sums := filepath.Join(o.Out, "checksums.txt")
	if err := WriteChecksums(sums, []Archive{a}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(sums); string(got) != fileSHA256(t, a.Path)+"  "+a.Name+"\n" {
		t.Errorf("checksums.txt = %q", got)
	}
}

// TestManifestForEveryTarget checks the manifest of a six-platform release field by field,
// over stand-in archives (building six binaries is `make release`'s job, not a test's).
func TestManifestForEveryTarget(t *testing.T) {
	o := stamp
	o.Out = t.TempDir()
	var archives []Archive
	for _, tg := range Targets {
		a := Archive{Target: tg, Name: ArchiveName(o.Version, tg)}
		a.Path = filepath.Join(o.Out, a.Name)
		if err := os.WriteFile(a.Path, []byte("stand-in for "+tg.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		a.SHA256 = fileSHA256(t, a.Path)
		archives = append(archives, a)
	}
	b, err := KrewManifest(o, archives)
	if err != nil {
		t.Fatal(err)
	}
	validateManifest(t, b, o, archives)
}

func TestRunRefusesAVersionKrewWouldRefuse(t *testing.T) {
	for _, v := range []string{"", "0.2.0", "v0.2", "latest", "v0.2.0 "} {
		if err := run(context.Background(), Options{Version: v}, ""); err == nil || !strings.Contains(err.Error(), "semantic version") {
			t.Errorf("version %q: err = %v, want a semantic version error", v, err)
		}
	}
}

var (
	krewName   = regexp.MustCompile(`^[\w-]+$`)
	sha256Hex  = regexp.MustCompile(`^[a-f0-9]{64}$`)
	krewLabels = map[string]bool{"os": true, "arch": true}
)

// validateManifest checks b the way krew's documentation and validator describe a plugin
// manifest, and against the archives it was made from.
func validateManifest(t *testing.T, b []byte, o Options, archives []Archive) {
	t.Helper()
	var p Plugin
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		t.Fatalf("manifest is not a strict krew Plugin: %v\n%s", err, b)
	}
	check := func(ok bool, format string, args ...any) {
		t.Helper()
		if !ok {
			t.Errorf("manifest: "+format, args...)
		}
	}
	check(p.APIVersion == "krew.googlecontainertools.github.com/v1alpha2", "apiVersion = %q", p.APIVersion)
	check(p.Kind == "Plugin", "kind = %q", p.Kind)
	check(p.Metadata.Name == "maintenance" && krewName.MatchString(p.Metadata.Name), "metadata.name = %q (kubectl maintenance)", p.Metadata.Name)
	check(p.Spec.Version == o.Version && semver.MatchString(p.Spec.Version), "spec.version = %q, want %q (semver with a leading v)", p.Spec.Version, o.Version)
	u, err := url.Parse(p.Spec.Homepage)
	check(err == nil && u.Scheme == "https" && u.Host != "", "spec.homepage = %q, want an https URL", p.Spec.Homepage)
	check(p.Spec.ShortDescription != "" && !strings.ContainsAny(p.Spec.ShortDescription, "\r\n"), "spec.shortDescription %q must be one line", p.Spec.ShortDescription)
	check(len(p.Spec.ShortDescription) <= 80, "spec.shortDescription is %d characters; krew search shows it in a column", len(p.Spec.ShortDescription))
	check(p.Spec.Description != "", "spec.description is empty")
	check(len(p.Spec.Platforms) == len(archives), "%d platforms for %d archives", len(p.Spec.Platforms), len(archives))
	seen := map[string]bool{}
	for i, pl := range p.Spec.Platforms {
		if i >= len(archives) {
			break
		}
		a := archives[i]
		where := fmt.Sprintf("platforms[%d] (%s)", i, a.Target)
		ml := pl.Selector.MatchLabels
		check(len(ml) > 0, "%s: empty selector", where)
		for k := range ml {
			check(krewLabels[k], "%s: selector key %q is not os or arch", where, k)
		}
		check(ml["os"] == a.Target.OS && ml["arch"] == a.Target.Arch, "%s: selector %v", where, ml)
		check(!seen[ml["os"]+"/"+ml["arch"]], "%s: a second entry for %v", where, ml)
		seen[ml["os"]+"/"+ml["arch"]] = true
		want := o.Repo + "/releases/download/" + o.Version + "/" + a.Name
		check(pl.URI == want, "%s: uri = %q, want %q", where, pl.URI, want)
		check(sha256Hex.MatchString(pl.SHA256), "%s: sha256 %q is not 64 lowercase hex digits", where, pl.SHA256)
		check(pl.SHA256 == fileSHA256(t, a.Path), "%s: sha256 does not match %s", where, a.Name)
		wantBin := "kubectl-maintenance"
		if a.Target.OS == "windows" {
			wantBin += ".exe"
		}
		check(pl.Bin == wantBin, "%s: bin = %q, want %q", where, pl.Bin, wantBin)
		check(len(pl.Files) > 0, "%s: files must be unset or non-empty", where)
		hasBin := false
		for _, f := range pl.Files {
			check(f.From != "" && f.To != "", "%s: file operation %+v needs from and to", where, f)
			hasBin = hasBin || f.From == pl.Bin
		}
		check(hasBin, "%s: files do not copy the bin %q", where, pl.Bin)
	}
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// unpack extracts a .tar.gz or .zip into dir and returns the names in order.
func unpack(t *testing.T, archive, dir string) []string {
	t.Helper()
	var names []string
	write := func(name string, mode os.FileMode, r io.Reader) {
		if strings.ContainsAny(name, `/\`) {
			t.Fatalf("archive entry %q is not flat", name)
		}
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := io.Copy(f, r); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	if strings.HasSuffix(archive, ".zip") {
		zr, err := zip.OpenReader(archive)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			write(f.Name, f.Mode().Perm(), rc)
			rc.Close()
		}
		return names
	}
	fh, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	gz, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Name == BinaryName && hdr.Mode&0o111 == 0 {
			t.Errorf("%s is not executable in the archive (mode %o)", hdr.Name, hdr.Mode)
		}
		write(hdr.Name, os.FileMode(hdr.Mode).Perm(), tr)
	}
	return names
}

// lookPath finds name in path the way a shell would, without changing this process's PATH.
func lookPath(name, path string) (string, error) {
	for _, d := range filepath.SplitList(path) {
		p := filepath.Join(d, name)
		if runtime.GOOS == "windows" {
			p += ".exe"
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found on PATH %s", name, path)
}
