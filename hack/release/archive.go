package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Module is the plugin's module path; the version stamps live in its cmd/cli package.
const Module = "github.com/kubectl-maintenance/kubectl-maintenance"

// BinaryName is the plugin's executable (kubectl finds plugins by the kubectl- prefix).
const BinaryName = "kubectl-maintenance"

// Target is one platform.
type Target struct{ OS, Arch string }

func (t Target) String() string { return t.OS + "/" + t.Arch }

// Bin is the executable's name on the target.
func (t Target) Bin() string {
	if t.OS == "windows" {
		return BinaryName + ".exe"
	}
	return BinaryName
}

// Options is what a release is built with.
type Options struct {
	// Version is the release, vMAJOR.MINOR.PATCH.
	Version string
	// Commit and Date are stamped into the binary.
	Commit, Date string
	// Out is the output directory.
	Out string
	// Repo is the GitHub repository URL.
	Repo string
}

// Archive is one built archive.
type Archive struct {
	Target Target
	// Name is the file name in the output directory.
	Name string
	// Path is where it is.
	Path   string
	SHA256 string
	Size   int64
}

// ArchiveName is the file name of the target's archive.
func ArchiveName(version string, t Target) string {
	ext := ".tar.gz"
	if t.OS == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("%s_%s_%s_%s%s", BinaryName, version, t.OS, t.Arch, ext)
}

// LDFlags are the linker flags of a release binary: stripped, and stamped.
func LDFlags(o Options) string {
	pkg := Module + "/cmd/cli"
	return fmt.Sprintf("-s -w -X %s.version=%s -X %s.commit=%s -X %s.date=%s", pkg, o.Version, pkg, o.Commit, pkg, o.Date)
}

// BuildArchive cross-builds the plugin for t and packs it with LICENSE into o.Out.
func BuildArchive(ctx context.Context, root string, o Options, t Target) (Archive, error) {
	tmp, err := os.MkdirTemp("", "release-"+t.OS+"-"+t.Arch+"-")
	if err != nil {
		return Archive{}, fmt.Errorf("build %s: %w", t, err)
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, t.Bin())
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", LDFlags(o), "-o", bin, "./cmd/"+BinaryName)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.OS, "GOARCH="+t.Arch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return Archive{}, fmt.Errorf("go build for %s: %w\n%s", t, err, out)
	}
	mtime, err := time.Parse(time.RFC3339, o.Date)
	if err != nil {
		mtime = time.Unix(0, 0)
	}
	files := []archiveFile{
		{name: t.Bin(), path: bin, mode: 0o755},
		{name: "LICENSE", path: filepath.Join(root, "LICENSE"), mode: 0o644},
	}
	var buf bytes.Buffer
	if t.OS == "windows" {
		err = writeZip(&buf, files, mtime)
	} else {
		err = writeTarGz(&buf, files, mtime)
	}
	if err != nil {
		return Archive{}, fmt.Errorf("archive %s: %w", t, err)
	}
	a := Archive{Target: t, Name: ArchiveName(o.Version, t)}
	a.Path = filepath.Join(o.Out, a.Name)
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return Archive{}, fmt.Errorf("archive %s: %w", t, err)
	}
	if err := os.WriteFile(a.Path, buf.Bytes(), 0o644); err != nil {
		return Archive{}, fmt.Errorf("archive %s: %w", t, err)
	}
	sum := sha256.Sum256(buf.Bytes())
	a.SHA256, a.Size = hex.EncodeToString(sum[:]), int64(buf.Len())
	return a, nil
}

// archiveFile is one file to pack.
type archiveFile struct {
	name, path string
	mode       int64
}

// writeTarGz packs files flat, owned by root, with a fixed time: the same inputs give the
// same bytes.
func writeTarGz(w io.Writer, files []archiveFile, mtime time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, f := range files {
		b, err := os.ReadFile(f.path)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(b)), ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(w io.Writer, files []archiveFile, mtime time.Time) error {
	zw := zip.NewWriter(w)
	for _, f := range files {
		b, err := os.ReadFile(f.path)
		if err != nil {
			return err
		}
		hdr := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: mtime.UTC()}
		hdr.SetMode(os.FileMode(f.mode))
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := fw.Write(b); err != nil {
			return err
		}
	}
	return zw.Close()
}

// WriteChecksums writes "<sha256>  <name>" lines, sorted by name, as sha256sum does (so
// `sha256sum -c checksums.txt` checks them).
func WriteChecksums(path string, archives []Archive) error {
	sorted := append([]Archive(nil), archives...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	lines := make([]string, 0, len(sorted))
	for _, a := range sorted {
		lines = append(lines, a.SHA256+"  "+a.Name)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("write checksums: %w", err)
	}
	return nil
}

// fillFromGit fills Commit and Date from the repository when they are not given: HEAD
// (with "-dirty" when `git status` shows changes, as Go's vcs.modified does) and HEAD's
// commit time in UTC.
func (o *Options) fillFromGit(ctx context.Context, root string) error {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	if o.Commit == "" {
		c, err := git("rev-parse", "HEAD")
		if err != nil {
			return err
		}
		if st, err := git("status", "--porcelain"); err == nil && st != "" {
			c += "-dirty"
		}
		o.Commit = c
	}
	if o.Date == "" {
		ct, err := git("log", "-1", "--format=%ct")
		if err != nil {
			return err
		}
		sec, err := strconv.ParseInt(ct, 10, 64)
		if err != nil {
			return fmt.Errorf("commit time %q: %w", ct, err)
		}
		o.Date = time.Unix(sec, 0).UTC().Format(time.RFC3339)
	}
	if _, err := time.Parse(time.RFC3339, o.Date); err != nil {
		return fmt.Errorf("-date %q is not RFC 3339: %w", o.Date, err)
	}
	return nil
}

// repoRoot is the module root: the nearest directory above the working directory (or this
// source file) holding go.mod with the plugin's module path.
func repoRoot() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		starts = append(starts, filepath.Dir(file))
	}
	for _, d := range starts {
		for ; ; d = filepath.Dir(d) {
			if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module "+Module+"\n")) {
				return d, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", fmt.Errorf("find the module root (go.mod of %s) from the working directory", Module)
}
