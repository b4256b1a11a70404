// Package chart renders, lints, installs, upgrades and uninstalls the Helm chart
// charts/kubectl-maintenance with Helm's Go SDK (helm.sh/helm/v3), offline. It is a module
// of its own, as hack/image is: Helm v3.22 requires k8s.io/* v0.37, the plugin pins v0.36
// (docs/CONVENTIONS: controller-runtime v0.24 pairs with v0.36), and one module would move
// the plugin's client-go. Its tests hold the chart to `kubectl maintenance install
// --controller --dry-run=client -o yaml` and `kubectl kustomize config/default`.
package chart

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/strvals"
)

// Dir is the chart's directory in the repository.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "charts", "kubectl-maintenance")
}

// Load loads the chart at dir.
func Load(dir string) (*chart.Chart, error) {
	c, err := loader.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", dir, err)
	}
	return c, nil
}

// Values parses --set style assignments ("image.tag=v1", "replicas=3") into values.
func Values(sets ...string) (map[string]any, error) {
	vals := map[string]any{}
	for _, s := range sets {
		if err := strvals.ParseInto(s, vals); err != nil {
			return nil, fmt.Errorf("parse value %q: %w", s, err)
		}
	}
	return vals, nil
}

// Render renders the chart as `helm template` does, CRDs included, for a release named
// release in namespace ns: the manifest, a YAML stream.
func Render(dir, release, ns string, vals map[string]any) (string, error) {
	c, err := Load(dir)
	if err != nil {
		return "", err
	}
	in := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	in.DryRun, in.ClientOnly, in.Replace, in.IncludeCRDs = true, true, true, true
	in.ReleaseName, in.Namespace = release, ns
	in.KubeVersion = &chartutil.KubeVersion{Version: "v1.36.3", Major: "1", Minor: "36"}
	rel, err := in.Run(c, vals)
	if err != nil {
		return "", fmt.Errorf("render chart %s: %w", dir, err)
	}
	return rel.Manifest, nil
}

// Lint lints the chart with vals, as `helm lint --strict` does: every message at warning
// level or above is returned as an error.
func Lint(dir, ns string, vals map[string]any) []error {
	l := action.NewLint()
	l.Strict, l.Namespace = true, ns
	res := l.Run([]string{dir}, vals)
	var errs []error
	for _, m := range res.Messages {
		if m.Severity >= 2 { // support.WarningSev
			errs = append(errs, fmt.Errorf("%s", strings.TrimSpace(m.Error())))
		}
	}
	return append(errs, res.Errors...)
}
