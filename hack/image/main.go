// Command image builds the in-cluster pool controller's container image without a
// container runtime or a registry: the plugin, cross-built static for linux, is the one
// layer on an empty base, run as the non-root user 65532 with `controller` as its
// default arguments. The image is written as one tar that is both an OCI image layout
// (oci-layout, index.json, blobs/) and a `docker save` archive (manifest.json), as Docker
// 25 and later write them: `docker load`, `podman load`, `kind load image-archive`,
// `ctr images import` and `skopeo copy oci-archive:` all read it. `make image` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
)

// Repository is the image's repository; config/manager/deployment.yaml runs DefaultImage.
const Repository = "ghcr.io/kubectl-maintenance/kubectl-maintenance"

// DevTag is the tag of an image built without a version.
const DevTag = "dev"

// DefaultImage is what `make image` builds with no VERSION and IMAGE.
const DefaultImage = Repository + ":" + DevTag

func main() {
	var o Options
	flag.StringVar(&o.Version, "version", "", "version to stamp into the binary and the image's labels (default: none; the tag is "+DevTag+")")
	flag.StringVar(&o.Commit, "commit", "", "commit to stamp (default: git rev-parse HEAD)")
	flag.StringVar(&o.Date, "date", "", "creation date, RFC 3339 (default: the commit's time, so builds are reproducible)")
	flag.StringVar(&o.Image, "image", "", "image name (default: "+Repository+":<version or "+DevTag+">)")
	flag.StringVar(&o.Arch, "arch", "amd64", "linux architecture of the image")
	flag.StringVar(&o.Source, "source", "https://github.com/kubectl-maintenance/kubectl-maintenance", "org.opencontainers.image.source label")
	flag.StringVar(&o.Out, "out", "dist/kubectl-maintenance-image.tar", "output tarball")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := Build(ctx, &o); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s (%s, linux/%s)\n", o.Out, o.imageName(), o.Arch)
}
