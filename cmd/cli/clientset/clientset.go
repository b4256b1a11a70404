// Package clientset builds the commands' clients from the kubectl cluster flags, as
// kubectl's client factory does: the REST config (checked cluster flags, the client's
// rate limits, a user agent, a request counter), the clientsets, the node Events' own
// rate-limited clientset, and the controller-runtime client with the scheme that knows
// NodePools and Maintenances.
package clientset

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/spf13/pflag"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/exitcode"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// Client rate limits, the defaults of --qps and --burst (README, "Client rate limits").
// client-go's (and kubectl's) 5/10 would make the cordons of 100 nodes alone take 19 s;
// Karpenter's 200/300 is a controller's budget. A drain's bursts are its cordons and its
// first evictions; the eviction pace itself follows the disruption controller (pacing).
const (
	DefaultQPS   = 50
	DefaultBurst = 100
)

// AddRateLimitFlags adds --qps and --burst, bound to qps and burst.
func AddRateLimitFlags(fs *pflag.FlagSet, qps *float32, burst *int) {
	fs.Float32Var(qps, "qps", *qps, "Requests a second the client may send to the API server, on average (kubectl: 5)")
	fs.IntVar(burst, "burst", *burst, "Requests the client may send at once above --qps (kubectl: 10)")
}

// ValidateRateLimits checks --qps and --burst.
func ValidateRateLimits(qps float32, burst int) error {
	if !(qps > 0) || math.IsInf(float64(qps), 0) {
		return exitcode.UsageErrorf("--qps must be a number above 0, got %v", qps)
	}
	if burst < 1 {
		return exitcode.UsageErrorf("--burst must be 1 or more, got %d", burst)
	}
	return nil
}

// CheckClusterFlags checks the kubectl cluster flags whose values client-go parses only
// when it loads the kubeconfig, so that a bad value is named as itself rather than as an
// invalid kubeconfig.
func CheckClusterFlags(f *genericclioptions.ConfigFlags) error {
	if f == nil || f.Timeout == nil || *f.Timeout == "" {
		return nil
	}
	if _, err := clientcmd.ParseTimeout(*f.Timeout); err != nil || strings.HasPrefix(*f.Timeout, "-") {
		return exitcode.UsageErrorf("invalid --request-timeout %q: must be a duration such as 30s or 1m, or a whole number of seconds (0: none)", *f.Timeout)
	}
	return nil
}

// RESTConfig returns a copy of the REST config from the cluster flags, with userAgent,
// no client-side eviction retries (the drain retries itself) and every request counted
// by requests. A kubeconfig problem is a usage error.
func RESTConfig(f *genericclioptions.ConfigFlags, userAgent string, requests *RequestCounter) (*rest.Config, error) {
	cfg, err := f.ToRESTConfig()
	if err != nil {
		return nil, exitcode.With(exitcode.Usage, fmt.Errorf("invalid kubeconfig: %w", err))
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = userAgent
	drain.DisableEvictionRetries(cfg)
	prev := cfg.WrapTransport
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if prev != nil {
			rt = prev(rt)
		}
		return requests.wrap(rt)
	}
	return cfg, nil
}

// RequestCounter counts requests through the transports of the REST configs it is given to.
type RequestCounter struct{ n atomic.Int64 }

// Count is how many requests were sent.
func (r *RequestCounter) Count() int64 { return r.n.Load() }

func (r *RequestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		r.n.Add(1)
		return rt.RoundTrip(req)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// Scheme knows the built-in kinds, CustomResourceDefinitions and NodePools.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	utilruntime.Must(mntv1.AddToScheme(s))
	return s
}

// NewPoolClient returns a controller-runtime client for cfg that knows NodePools.
func NewPoolClient(cfg *rest.Config) (client.Client, error) {
	cl, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	return cl, nil
}

// New returns a clientset for cfg.
func New(cfg *rest.Config) (kubernetes.Interface, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, exitcode.With(exitcode.Usage, fmt.Errorf("build client: %w", err))
	}
	return cs, nil
}

// eventShare is the part of --qps and --burst the node Events get, on a rate limiter of
// their own: informational writes never wait in front of a cordon or an eviction, and
// never take more than a fifth again of the API server's share.
const eventShare = 5

// NewForEvents returns a clientset for the node Events: cfg with a rate limiter of its
// own at a fifth of its QPS and burst (at least 1 each).
func NewForEvents(cfg *rest.Config) (kubernetes.Interface, error) {
	if cfg.QPS > 0 {
		cfg.QPS = max(cfg.QPS/eventShare, 1)
	}
	if cfg.Burst > 0 {
		cfg.Burst = max(cfg.Burst/eventShare, 1)
	}
	return New(cfg)
}
