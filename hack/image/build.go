package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Module is the plugin's module path; the version stamps live in its cmd/cli package.
const Module = "github.com/kubectl-maintenance/kubectl-maintenance"

// Binary is the executable in the image, at its root, and the entrypoint.
const Binary = "kubectl-maintenance"

// User is the non-root user (and group) the controller runs as: distroless's "nonroot".
const User = "65532:65532"

// Options is what an image is built with.
type Options struct {
	Version, Commit, Date string
	// Image is the name written into the archive (index.json and manifest.json).
	Image string
	// Arch is the linux architecture.
	Arch string
	// Source is the repository URL for the source label.
	Source string
	// Out is the tarball's path; Root is the module root (found when empty).
	Out, Root string
}

func (o *Options) imageName() string {
	if o.Image != "" {
		return o.Image
	}
	tag := DevTag
	if o.Version != "" {
		tag = o.Version
	}
	return Repository + ":" + tag
}

// Build cross-builds the plugin and writes the image tarball to o.Out.
func Build(ctx context.Context, o *Options) error {
	if err := o.complete(ctx); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "image-")
	if err != nil {
		return fmt.Errorf("build image: %w", err)
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, Binary)
	ldflags := "-s -w"
	pkg := Module + "/cmd/cli"
	for k, v := range map[string]string{"version": o.Version, "commit": o.Commit, "date": o.Date} {
		if v != "" {
			ldflags += fmt.Sprintf(" -X %s.%s=%s", pkg, k, v)
		}
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", ldflags, "-o", bin, "./cmd/"+Binary)
	cmd.Dir = o.Root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+o.Arch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build for linux/%s: %w\n%s", o.Arch, err, out)
	}
	created, _ := time.Parse(time.RFC3339, o.Date)
	img, err := Image(bin, o, created)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(o.Out), 0o755); err != nil {
		return fmt.Errorf("write image: %w", err)
	}
	return WriteArchive(o.Out, filepath.Join(tmp, "layout"), img, o.imageName())
}

// Image is the controller image: one layer holding bin at /kubectl-maintenance.
func Image(bin string, o *Options, created time.Time) (v1.Image, error) {
	b, err := os.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("read binary: %w", err)
	}
	var layerTar bytes.Buffer
	tw := tar.NewWriter(&layerTar)
	hdr := &tar.Header{Name: Binary, Mode: 0o755, Size: int64(len(b)), ModTime: created, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	if _, err := tw.Write(b); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	data := layerTar.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: created}, CreatedBy: "hack/image: go build ./cmd/" + Binary, Comment: "static binary, CGO_ENABLED=0"},
	})
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", o.Arch
	cf.Created = v1.Time{Time: created}
	cf.Config.Entrypoint = []string{"/" + Binary}
	cf.Config.Cmd = []string{"controller"}
	cf.Config.User = User
	cf.Config.WorkingDir = "/"
	cf.Config.Labels = map[string]string{
		"org.opencontainers.image.title":       Binary,
		"org.opencontainers.image.description": "kubectl-maintenance: the controller (NodePools and Maintenances)",
		"org.opencontainers.image.source":      o.Source,
		"org.opencontainers.image.version":     o.labelVersion(),
		"org.opencontainers.image.revision":    o.Commit,
		"org.opencontainers.image.created":     created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("image config: %w", err)
	}
	return img, nil
}

func (o *Options) labelVersion() string {
	if o.Version != "" {
		return o.Version
	}
	return DevTag
}

// WriteArchive writes img as an OCI image layout in dir, adds a `docker save`
// manifest.json over the same blobs, and tars the directory to out (sorted, fixed times).
func WriteArchive(out, dir string, img v1.Image, name string) error {
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("image layout: %w", err)
	}
	_, tag, _ := strings.Cut(name[strings.LastIndex(name, "/")+1:], ":")
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"io.containerd.image.name":          name,
		"org.opencontainers.image.ref.name": tag,
	})); err != nil {
		return fmt.Errorf("image layout: %w", err)
	}
	cfgName, err := img.ConfigName()
	if err != nil {
		return fmt.Errorf("image config: %w", err)
	}
	layers, err := img.Layers()
	if err != nil {
		return fmt.Errorf("image layers: %w", err)
	}
	entry := struct {
		Config   string
		RepoTags []string
		Layers   []string
	}{Config: "blobs/sha256/" + cfgName.Hex, RepoTags: []string{name}}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return fmt.Errorf("image layer: %w", err)
		}
		entry.Layers = append(entry.Layers, "blobs/sha256/"+d.Hex)
	}
	mj, err := json.Marshal([]any{entry})
	if err != nil {
		return fmt.Errorf("manifest.json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), mj, 0o644); err != nil {
		return fmt.Errorf("manifest.json: %w", err)
	}
	return tarDir(out, dir)
}

// tarDir writes the regular files and directories under dir into out, sorted, with fixed
// owners and times so the same image gives the same bytes.
func tarDir(out, dir string) error {
	var paths []string
	if err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			paths = append(paths, p)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("image tarball: %w", err)
	}
	sort.Strings(paths)
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("image tarball: %w", err)
	}
	tw := tar.NewWriter(f)
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			f.Close()
			return fmt.Errorf("image tarball: %w", err)
		}
		rel, _ := filepath.Rel(dir, p)
		hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if st.IsDir() {
			hdr.Name += "/"
			hdr.Typeflag, hdr.Mode = tar.TypeDir, 0o755
		} else {
			hdr.Typeflag, hdr.Size = tar.TypeReg, st.Size()
		}
		if err := tw.WriteHeader(hdr); err != nil {
			f.Close()
			return fmt.Errorf("image tarball: %w", err)
		}
		if !st.IsDir() {
			if err := copyFile(tw, p); err != nil {
				f.Close()
				return fmt.Errorf("image tarball: %w", err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return fmt.Errorf("image tarball: %w", err)
	}
	return f.Close()
}

func copyFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// complete fills the module root, commit and date from the repository.
func (o *Options) complete(ctx context.Context) error {
	if o.Arch == "" {
		o.Arch = "amd64"
	}
	if o.Root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		for d := wd; ; d = filepath.Dir(d) {
			if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module "+Module+"\n")) {
				o.Root = d
				break
			}
			if filepath.Dir(d) == d {
				return fmt.Errorf("find the module root (go.mod of %s) above %s", Module, wd)
			}
		}
	}
	if !filepath.IsAbs(o.Out) {
		o.Out = filepath.Join(o.Root, o.Out)
	}
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = o.Root
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
