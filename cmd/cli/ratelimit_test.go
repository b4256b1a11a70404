package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
)

// --qps and --burst reach the REST config every command builds, and the client built
// from it; the node Events' client has a limiter of its own at a fifth.
func TestRateLimitFlagsReachTheClient(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		args      []string
		wantQPS   float32
		wantBurst int
		eventsQPS float32 // the node Events' own client: a fifth, at least 1
	}{
		"the defaults":    {nil, DefaultQPS, DefaultBurst, DefaultQPS / 5},
		"values given":    {[]string{"--qps", "7.5", "--burst", "11"}, 7.5, 11, 1.5},
		"kubectl's own":   {[]string{"--qps=5", "--burst=10"}, 5, 10, 1},
		"karpenter's own": {[]string{"--qps", "200", "--burst", "300"}, 200, 300, 40},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newCommon(genericiooptions.NewTestIOStreamsDiscard())
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			c.ConfigFlags.AddFlags(fs)
			c.addRateLimitFlags(fs)
			if err := fs.Parse(append([]string{"--kubeconfig", kubeconfig}, tc.args...)); err != nil {
				t.Fatal(err)
			}
			cfg, err := c.RESTConfig()
			if err != nil {
				t.Fatal(err)
			}
			if cfg.QPS != tc.wantQPS || cfg.Burst != tc.wantBurst {
				t.Errorf("rest config QPS %v burst %d, want %v and %d", cfg.QPS, cfg.Burst, tc.wantQPS, tc.wantBurst)
			}
			cs, err := c.Client()
			if err != nil {
				t.Fatal(err)
			}
			if got := cs.(*kubernetes.Clientset).CoreV1().RESTClient().GetRateLimiter().QPS(); got != tc.wantQPS {
				t.Errorf("the client's rate limiter allows %v requests a second, want %v", got, tc.wantQPS)
			}
			ec, err := c.EventClient()
			if err != nil {
				t.Fatal(err)
			}
			lim := ec.(*kubernetes.Clientset).EventsV1().RESTClient().GetRateLimiter()
			if got := lim.QPS(); got != tc.eventsQPS {
				t.Errorf("the Events' rate limiter allows %v requests a second, want %v", got, tc.eventsQPS)
			}
			if lim == cs.(*kubernetes.Clientset).CoreV1().RESTClient().GetRateLimiter() {
				t.Error("the Events share the drain's rate limiter")
			}
		})
	}
}
