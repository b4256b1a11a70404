// Package config embeds the manifests under config/ that "kubectl maintenance install
// --controller" applies besides the CRDs (package crd): the controller's RBAC (rbac/)
// its Deployment (manager/) and the admission policy (admission/). Package install decodes them; samples/ is not embedded.
package config

import "embed"

// Controller holds every manifest of rbac/ and manager/ (and their kustomization.yaml,
// which package install skips), so that a file added to either
// directory is installed without a code change. Package install orders the objects by
// kind, not by file, so a new directory of manifests is one more pattern on the line
// below and nothing else (the admission policies: admission/*.yaml). go:embed fails
// on a pattern that matches no file, so add a directory's pattern with its first file.
//
//go:embed rbac/*.yaml manager/*.yaml admission/*.yaml
var Controller embed.FS
