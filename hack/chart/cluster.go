package chart

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli"
)

// Cluster installs, upgrades and uninstalls the chart in a cluster, as helm does.
type Cluster struct {
	Kubeconfig, Namespace, Release string
}

// Do runs install, upgrade or uninstall with vals and says what it did.
func (c Cluster) Do(cmd string, vals map[string]any) (string, error) {
	settings := cli.New()
	settings.KubeConfig = c.Kubeconfig
	settings.SetNamespace(c.Namespace)
	cfg := &action.Configuration{}
	if err := cfg.Init(settings.RESTClientGetter(), c.Namespace, "secret", func(string, ...any) {}); err != nil {
		return "", fmt.Errorf("helm configuration: %w", err)
	}
	if cmd == "uninstall" {
		res, err := action.NewUninstall(cfg).Run(c.Release)
		if err != nil {
			return "", fmt.Errorf("uninstall %s: %w", c.Release, err)
		}
		return fmt.Sprintf("release %q uninstalled; kept: %s", c.Release, strings.TrimSpace(res.Info)), nil
	}
	ch, err := Load(Dir())
	if err != nil {
		return "", err
	}
	if cmd == "install" {
		in := action.NewInstall(cfg)
		in.ReleaseName, in.Namespace, in.Timeout = c.Release, c.Namespace, 2*time.Minute
		rel, err := in.Run(ch, vals)
		if err != nil {
			return "", fmt.Errorf("install %s: %w", c.Release, err)
		}
		return fmt.Sprintf("release %q installed: revision %d, %s", rel.Name, rel.Version, rel.Info.Status), nil
	}
	up := action.NewUpgrade(cfg)
	up.Namespace, up.Timeout = c.Namespace, 2*time.Minute
	rel, err := up.Run(c.Release, ch, vals)
	if err != nil {
		return "", fmt.Errorf("upgrade %s: %w", c.Release, err)
	}
	return fmt.Sprintf("release %q upgraded: revision %d, %s", rel.Name, rel.Version, rel.Info.Status), nil
}

// Package writes the chart archive for the plugin's version (vX.Y.Z: chart version X.Y.Z,
// appVersion and image tag vX.Y.Z) into out, and adds its line to out/checksums.txt when
// that file exists (make release writes it first). It returns the archive's path.
func Package(dir, version, out string) (string, error) {
	if !strings.HasPrefix(version, "v") {
		return "", fmt.Errorf("version %q: want vX.Y.Z", version)
	}
	ch, err := Load(dir)
	if err != nil {
		return "", err
	}
	ch.Metadata.Version, ch.Metadata.AppVersion = strings.TrimPrefix(version, "v"), version
	if err := ch.Validate(); err != nil {
		return "", fmt.Errorf("chart for %s: %w", version, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", out, err)
	}
	path, err := chartutil.Save(ch, out)
	if err != nil {
		return "", fmt.Errorf("package chart: %w", err)
	}
	sums := filepath.Join(out, "checksums.txt")
	if _, err := os.Stat(sums); err == nil {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("read %s: %w", path, err)
		}
		h := sha256.Sum256(b)
		f, err := os.OpenFile(sums, os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return "", fmt.Errorf("open %s: %w", sums, err)
		}
		defer f.Close()
		if _, err := fmt.Fprintf(f, "%s  %s\n", hex.EncodeToString(h[:]), filepath.Base(path)); err != nil {
			return "", fmt.Errorf("write %s: %w", sums, err)
		}
	}
	return path, nil
}
