package main

import (
	"archive/tar"
	"context"
	"debug/elf"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// TestImageReadsBack builds the image as `make image` does and reads the tarball back both
// ways a runtime would: as an OCI image layout and as a `docker save` archive.
func TestImageReadsBack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin; not in -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	o := &Options{Version: "v0.2.0", Commit: "0123456789abcdef0123456789abcdef01234567", Date: "2026-11-24T08:00:00Z",
		Arch: runtime.GOARCH, Source: "https://github.com/kubectl-maintenance/kubectl-maintenance", Out: filepath.Join(t.TempDir(), "image.tar")}
	if err := Build(ctx, o); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(o.Out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %.1f MiB", o.imageName(), float64(st.Size())/(1<<20))

	// The docker-save view, by its tag.
	tag, err := name.NewTag(Repository + ":v0.2.0")
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(o.Out, &tag)
	if err != nil {
		t.Fatalf("read as docker save: %v", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if strings.Join(c.Entrypoint, " ") != "/kubectl-maintenance" || strings.Join(c.Cmd, " ") != "controller" {
		t.Errorf("entrypoint %q cmd %q, want /kubectl-maintenance controller", c.Entrypoint, c.Cmd)
	}
	if c.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532", c.User)
	}
	for k, v := range map[string]string{
		"org.opencontainers.image.version":  "v0.2.0",
		"org.opencontainers.image.source":   o.Source,
		"org.opencontainers.image.revision": o.Commit,
		"org.opencontainers.image.created":  o.Date,
	} {
		if c.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
		}
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s", cf.OS, cf.Architecture)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 || len(cf.RootFS.DiffIDs) != 1 {
		t.Fatalf("%d layers, %d diff IDs; want one (an empty base)", len(layers), len(cf.RootFS.DiffIDs))
	}
	bin := filepath.Join(t.TempDir(), "kubectl-maintenance")
	if names := extractLayer(t, layers[0], bin); strings.Join(names, ",") != "kubectl-maintenance" {
		t.Errorf("layer holds %v, want only kubectl-maintenance", names)
	}
	// Static: no interpreter, so it runs on an empty base.
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("binary in the layer is not ELF: %v", err)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("binary is dynamically linked (has PT_INTERP)")
		}
	}
	ef.Close()
	if runtime.GOOS == "linux" {
		out, err := exec.CommandContext(ctx, bin, "version", "--client", "-o", "json").Output()
		if err != nil {
			t.Fatalf("run the image's binary: %v", err)
		}
		var doc struct{ ClientVersion map[string]string }
		if err := json.Unmarshal(out, &doc); err != nil || doc.ClientVersion["version"] != "v0.2.0" || doc.ClientVersion["commit"] != o.Commit {
			t.Errorf("the image's binary reports %s (%v)", out, err)
		}
	}

	// The OCI layout view: the same image, named.
	dir := t.TempDir()
	untar(t, o.Out, dir)
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("read as OCI layout: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].MediaType != types.OCIManifestSchema1 || im.Manifests[0].Annotations["io.containerd.image.name"] != Repository+":v0.2.0" {
		t.Fatalf("index.json: %+v", im.Manifests)
	}
	// `docker save` has no manifest of its own (a reader makes one up), so the same image
	// means the same config and the same layer blobs.
	oci, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	ociCfg, _ := oci.ConfigName()
	dockerCfg, _ := img.ConfigName()
	ociLayers, _ := oci.Layers()
	if ociCfg != dockerCfg || len(ociLayers) != 1 {
		t.Fatalf("OCI layout config %s (%d layers), docker-save config %s: not the same image", ociCfg, len(ociLayers), dockerCfg)
	}
	ociLayer, _ := ociLayers[0].Digest()
	dockerLayer, _ := layers[0].Digest()
	if ociLayer != dockerLayer {
		t.Errorf("OCI layout layer %s, docker-save layer %s", ociLayer, dockerLayer)
	}
	if mt, _ := ociLayers[0].MediaType(); mt != types.OCILayer {
		t.Errorf("layer media type %s, want %s", mt, types.OCILayer)
	}
}

// TestDeploymentRunsTheImageMakeBuilds keeps config/manager in step with `make image`.
func TestDeploymentRunsTheImageMakeBuilds(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "config", "manager", "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.Contains(s, "image: "+DefaultImage+"\n") {
		t.Errorf("config/manager/deployment.yaml does not run %s (what `make image` builds)", DefaultImage)
	}
	if strings.Contains(s, "REPLACE-ME") {
		t.Errorf("config/manager/deployment.yaml still has a REPLACE-ME image")
	}
}

func extractLayer(t *testing.T, l interface{ Uncompressed() (io.ReadCloser, error) }, dst string) []string {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var names []string
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
		if hdr.Name == Binary {
			if hdr.Mode&0o111 == 0 || hdr.Uid != 0 {
				t.Errorf("%s: mode %o uid %d", hdr.Name, hdr.Mode, hdr.Uid)
			}
			f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
}

func untar(t *testing.T, path, dir string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		if hdr.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		w, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(w, tr); err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
}
