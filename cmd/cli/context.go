package cli

import (
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/render"
)

// newNDJSON is the NDJSON printer on c.Out, each line naming the cluster (clusterName).
func (c *Common) newNDJSON() *render.NDJSON {
	return render.NewNDJSON(c.Out, version, time.Now, c.APIRequests).SetContext(c.clusterName())
}

// clusterName names the cluster the command runs against, as a wrapper that runs it over
// several contexts knows it: --context, else the kubeconfig's current context, else the
// server ("" when the kubeconfig cannot be read: the command fails on it anyway).
func (c *Common) clusterName() string {
	if c.ConfigFlags == nil {
		return ""
	}
	if c.ConfigFlags.Context != nil && *c.ConfigFlags.Context != "" {
		return *c.ConfigFlags.Context
	}
	raw, err := c.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
	if err == nil && raw.CurrentContext != "" {
		return raw.CurrentContext
	}
	if cfg, err := c.ConfigFlags.ToRESTConfig(); err == nil {
		return cfg.Host
	}
	return ""
}
