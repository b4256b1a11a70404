package cli

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// The NDJSON context field names the cluster as a multi-context wrapper knows it.
func TestClusterName(t *testing.T) {
	withCtx := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://10.0.0.1:6443"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: prod, context: {cluster: c, user: u}}, {name: stage, context: {cluster: c, user: u}}]
current-context: prod
`
	noCtx := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://10.0.0.1:6443"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: only, context: {cluster: c, user: u}}]
`
	cases := []struct {
		name, kubeconfig, flag, server, want string
	}{
		{"the current context", withCtx, "", "", "prod"},
		{"--context wins", withCtx, "stage", "", "stage"},
		{"no current context: the server", noCtx, "", "https://10.0.0.2:6443", "https://10.0.0.2:6443"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config")
			if err := os.WriteFile(path, []byte(tc.kubeconfig), 0o600); err != nil {
				t.Fatal(err)
			}
			f := genericclioptions.NewConfigFlags(false)
			f.KubeConfig = &path
			f.Context = &tc.flag
			f.APIServer = &tc.server
			c := &Common{ConfigFlags: f}
			if got := c.clusterName(); got != tc.want {
				t.Errorf("clusterName() = %q, want %q", got, tc.want)
			}
		})
	}
}
