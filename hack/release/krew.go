package main

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// Krew's manifest identity: kubectl finds the plugin as `kubectl maintenance`.
const (
	KrewAPIVersion = "krew.googlecontainertools.github.com/v1alpha2"
	KrewKind       = "Plugin"
	PluginName     = "maintenance"
	// DefaultRepo is the project's repository: the manifest's homepage, and the release
	// download URIs are under it.
	DefaultRepo = "https://github.com/kubectl-maintenance/kubectl-maintenance"
)

// Plugin is krew's plugin manifest (krew.googlecontainertools.github.com/v1alpha2).
type Plugin struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   PluginMetadata `json:"metadata"`
	Spec       PluginSpec     `json:"spec"`
}

// PluginMetadata names the plugin.
type PluginMetadata struct {
	Name string `json:"name"`
}

// PluginSpec is what krew shows and installs.
type PluginSpec struct {
	Version          string     `json:"version"`
	Homepage         string     `json:"homepage"`
	ShortDescription string     `json:"shortDescription"`
	Description      string     `json:"description"`
	Caveats          string     `json:"caveats,omitempty"`
	Platforms        []Platform `json:"platforms"`
}

// Platform is one archive and where its executable is.
type Platform struct {
	Selector Selector        `json:"selector"`
	URI      string          `json:"uri"`
	SHA256   string          `json:"sha256"`
	Files    []FileOperation `json:"files,omitempty"`
	Bin      string          `json:"bin"`
}

// Selector matches krew's os and arch labels.
type Selector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

// FileOperation copies a file out of the unpacked archive.
type FileOperation struct {
	From string `json:"from"`
	To   string `json:"to"`
}

const shortDescription = "Drain nodes safely: PDB-aware, resumable, with pools and a dashboard"

const description = `Cordons and drains nodes through the Eviction API only, so PodDisruptionBudgets
are never violated. Before anything changes it says what will block and why;
while it waits it says what it waits on and the remedy. Refused evictions are
retried when the blocking budget changes, nodes drain in parallel as far as the
budgets allow, and an interrupted run is finished by running it again.
It also moves nodes between NodePools (labels, taints, a RuntimeClass), prints
NDJSON events for runbooks (-o json) and has an interactive dashboard.
`

const caveats = `The plugin uses your kubeconfig. Draining needs RBAC to get, list, watch and
patch nodes, list and watch pods and PodDisruptionBudgets, and create
pods/eviction. Node pools need the NodePool CRD: kubectl maintenance pool install.
`

// KrewManifest returns the krew manifest of the archives, one platform per archive.
func KrewManifest(o Options, archives []Archive) ([]byte, error) {
	repo := strings.TrimSuffix(o.Repo, "/")
	p := Plugin{
		APIVersion: KrewAPIVersion,
		Kind:       KrewKind,
		Metadata:   PluginMetadata{Name: PluginName},
		Spec: PluginSpec{
			Version:          o.Version,
			Homepage:         repo,
			ShortDescription: shortDescription,
			Description:      description,
			Caveats:          caveats,
		},
	}
	for _, a := range archives {
		p.Spec.Platforms = append(p.Spec.Platforms, Platform{
			Selector: Selector{MatchLabels: map[string]string{"os": a.Target.OS, "arch": a.Target.Arch}},
			URI:      fmt.Sprintf("%s/releases/download/%s/%s", repo, o.Version, a.Name),
			SHA256:   a.SHA256,
			Files: []FileOperation{
				{From: a.Target.Bin(), To: "."},
				{From: "LICENSE", To: "."},
			},
			Bin: a.Target.Bin(),
		})
	}
	b, err := yaml.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode krew manifest: %w", err)
	}
	return b, nil
}
