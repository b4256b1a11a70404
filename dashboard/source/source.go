// Package source feeds the dashboard: informers on nodes, pods, PodDisruptionBudgets
// and NodePools, the read model built from their caches (Build), and a one-line account
// of what keeps the data from being fresh (an unreachable API server, a missing
// permission). It never blocks its caller on the API server: the dashboard starts at
// once and shows "connecting" or the problem until the caches fill.
package source

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// Defaults of Config.
const (
	// DefaultRequestTimeout bounds each probe request: a server that does not answer in
	// this time is reported as unreachable.
	DefaultRequestTimeout = 10 * time.Second
	// DefaultProbeEvery is how often the source checks the server while the data is
	// missing or a problem is shown, and, when all is well, that the server still answers.
	DefaultProbeEvery = 5 * time.Second
	// DefaultSnapshotEvery bounds how often the read model is rebuilt: changes arriving in
	// between are folded into one snapshot (screen refreshes, not API calls).
	DefaultSnapshotEvery = 250 * time.Millisecond
)

// Config is what a Source needs. Kube is required; Dynamic (for NodePools) may be nil.
type Config struct {
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	// Server names the API server in messages (the kubeconfig's host).
	Server         string
	RequestTimeout time.Duration
	ProbeEvery     time.Duration
	SnapshotEvery  time.Duration
	Clock          clock.WithTicker
}

// Source delivers the dashboard's snapshots.
type Source struct {
	cfg   Config
	snaps chan data.Snapshot
	poke  chan struct{}

	nodes, pods, pdbs cache.SharedIndexInformer

	mu      sync.Mutex
	pools   cache.SharedIndexInformer // set once NodePools are found installed
	mnts    cache.SharedIndexInformer // set once Maintenances are found installed
	problem string                    // from the last probe
	watchEr map[string]watchError     // resource -> its last watch error
}

// watchError is a reflector's failure. A reflector retries at most every 30 s, so an error
// not repeated for watchErrorFor has gone away.
type watchError struct {
	msg string
	at  time.Time
}

const watchErrorFor = 65 * time.Second

var (
	poolsGVR = v1alpha1.GroupVersion.WithResource("nodepools")
	mntsGVR  = mntv1.GroupVersion.WithResource("maintenances")
)

// New validates cfg, fills its defaults and builds the informers (not started yet).
func New(cfg Config) (*Source, error) {
	if cfg.Kube == nil {
		return nil, errors.New("dashsource: Config.Kube is required")
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.ProbeEvery <= 0 {
		cfg.ProbeEvery = DefaultProbeEvery
	}
	if cfg.SnapshotEvery <= 0 {
		cfg.SnapshotEvery = DefaultSnapshotEvery
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	s := &Source{cfg: cfg, snaps: make(chan data.Snapshot, 1), poke: make(chan struct{}, 1), watchEr: map[string]watchError{}}
	core, pol := cfg.Kube.CoreV1(), cfg.Kube.PolicyV1()
	s.nodes = s.informer("nodes", &corev1.Node{},
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return core.Nodes().List(ctx, o)
		},
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return core.Nodes().Watch(ctx, o)
		})
	s.pods = s.informer("pods", &corev1.Pod{},
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return core.Pods("").List(ctx, o)
		},
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return core.Pods("").Watch(ctx, o)
		})
	s.pdbs = s.informer("poddisruptionbudgets", &policyv1.PodDisruptionBudget{},
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return pol.PodDisruptionBudgets("").List(ctx, o)
		},
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return pol.PodDisruptionBudgets("").Watch(ctx, o)
		})
	return s, nil
}

// listThenWatch is a ListWatch that tells the reflector it does not support watch-list
// semantics. With client-go's WatchListClient default, a reflector streams the initial
// list over a watch, and its failures are logged, not handed to the WatchErrorHandler
// this source reads; a plain list fails loudly and reaches it.
type listThenWatch struct{ *cache.ListWatch }

// IsWatchListSemanticsUnSupported implements client-go's opt-out of watch-list.
func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }

func (s *Source) informer(resource string, obj runtime.Object,
	list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) cache.SharedIndexInformer {
	lw := listThenWatch{&cache.ListWatch{ListWithContextFunc: list, WatchFuncWithContext: watchFn}}
	inf := cache.NewSharedIndexInformer(lw, obj, 0, cache.Indexers{})
	_ = inf.SetTransform(trim)
	_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		s.mu.Lock()
		s.watchEr[resource] = watchError{msg: Describe(err, resource, s.cfg.Server, s.cfg.RequestTimeout), at: s.cfg.Clock.Now()}
		s.mu.Unlock()
		s.signal()
	})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.signal() },
		UpdateFunc: func(any, any) { s.signal() },
		DeleteFunc: func(any) { s.signal() },
	})
	return inf
}

func (s *Source) signal() {
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

// Snapshots is the channel the dashboard reads; it holds only the newest snapshot.
func (s *Source) Snapshots() <-chan data.Snapshot { return s.snaps }

// Run starts the informers, the probe and the snapshot feed, and returns when ctx ends
// and every goroutine it started has stopped.
func (s *Source) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, inf := range []cache.SharedIndexInformer{s.nodes, s.pods, s.pdbs} {
		wg.Go(func() { inf.RunWithContext(ctx) })
	}
	wg.Go(func() { s.probeLoop(ctx, &wg) })
	wg.Go(func() { s.feed(ctx) })
	s.signal()
	wg.Wait()
}

// probeLoop asks the server directly, with a deadline, what the informers may be
// retrying in silence: an unreachable server, a missing permission. It also finds
// NodePools once their CRD is installed.
func (s *Source) probeLoop(ctx context.Context, wg *sync.WaitGroup) {
	t := s.cfg.Clock.NewTicker(s.cfg.ProbeEvery)
	defer t.Stop()
	healthy := 0 // probes in a row that found all well, caches full
	for tick := 0; ; tick++ {
		// While all is well, every healthyEvery-th tick is enough to notice a change.
		if healthy == 0 || tick%healthyEvery == 0 {
			problem := s.probe(ctx, wg)
			if ctx.Err() != nil {
				return
			}
			s.mu.Lock()
			if problem == "" && s.problem != "" {
				clear(s.watchEr) // the server answers again: the reflectors' errors are old news
			}
			s.problem = problem
			if problem == "" && s.synced() {
				healthy++
			} else {
				healthy = 0
			}
			s.mu.Unlock()
		}
		s.signal() // also ages out old watch errors on screen
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// healthyEvery spaces the probes out while the server answers and the caches are full
// (every 6th tick: 30 s by default): three one-item lists are cheap, but need not be
// asked every 5 s of an idle dashboard.
const healthyEvery = 6

func (s *Source) probe(ctx context.Context, wg *sync.WaitGroup) string {
	one := metav1.ListOptions{Limit: 1}
	checks := []struct {
		resource string
		call     func(context.Context) error
	}{
		{"nodes", func(c context.Context) error { _, err := s.cfg.Kube.CoreV1().Nodes().List(c, one); return err }},
		{"pods", func(c context.Context) error { _, err := s.cfg.Kube.CoreV1().Pods("").List(c, one); return err }},
		{"poddisruptionbudgets", func(c context.Context) error {
			_, err := s.cfg.Kube.PolicyV1().PodDisruptionBudgets("").List(c, one)
			return err
		}},
	}
	for _, c := range checks {
		rctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
		err := c.call(rctx)
		cancel()
		if ctx.Err() != nil {
			return ""
		}
		if err != nil {
			return Describe(err, c.resource, s.cfg.Server, s.cfg.RequestTimeout)
		}
	}
	s.findOptional(ctx, wg, poolsGVR, &s.pools)
	s.findOptional(ctx, wg, mntsGVR, &s.mnts)
	return ""
}

// findOptional starts the informer of a custom resource (NodePools, Maintenances) into
// *inf the first time a list of it succeeds. A cluster without the CRD (or a user who may
// not list it) simply has none.
func (s *Source) findOptional(ctx context.Context, wg *sync.WaitGroup, gvr schema.GroupVersionResource, inf *cache.SharedIndexInformer) {
	s.mu.Lock()
	found := *inf != nil
	s.mu.Unlock()
	if found || s.cfg.Dynamic == nil {
		return
	}
	res := s.cfg.Dynamic.Resource(gvr)
	rctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	_, err := res.List(rctx, metav1.ListOptions{Limit: 1})
	cancel()
	if err != nil {
		return
	}
	i := s.informer(gvr.Resource, &unstructured.Unstructured{},
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return res.List(ctx, o) },
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return res.Watch(ctx, o) })
	s.mu.Lock()
	*inf = i
	s.mu.Unlock()
	wg.Go(func() { i.RunWithContext(ctx) })
}

// synced reports whether every started informer has listed once. Call with s.mu held.
func (s *Source) synced() bool {
	ok := s.nodes.HasSynced() && s.pods.HasSynced() && s.pdbs.HasSynced()
	for _, inf := range []cache.SharedIndexInformer{s.pools, s.mnts} {
		if inf != nil {
			ok = ok && inf.HasSynced()
		}
	}
	return ok
}

// feed rebuilds the snapshot after changes, at most every SnapshotEvery, keeping only
// the newest undelivered one.
func (s *Source) feed(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.poke:
		}
		snap := s.Snapshot()
		select { // drop the undelivered one: only the newest matters
		case <-s.snaps:
		default:
		}
		select {
		case s.snaps <- snap:
		default:
		}
		select {
		case <-ctx.Done():
			return
		case <-s.cfg.Clock.After(s.cfg.SnapshotEvery):
		}
	}
}

// Snapshot builds the read model from the caches as they are now, with the status.
func (s *Source) Snapshot() data.Snapshot {
	s.mu.Lock()
	poolsInf, mntsInf, problem, synced := s.pools, s.mnts, s.problem, s.synced()
	if problem == "" {
		for _, r := range []string{"nodes", "pods", "poddisruptionbudgets", "nodepools", "maintenances"} {
			if we, ok := s.watchEr[r]; ok && s.cfg.Clock.Since(we.at) < watchErrorFor {
				problem = we.msg
				break
			}
		}
	}
	s.mu.Unlock()
	var nodes []*corev1.Node
	var pods []*corev1.Pod
	var pdbs []*policyv1.PodDisruptionBudget
	var pools []*v1alpha1.NodePool
	for _, o := range s.nodes.GetStore().List() {
		nodes = append(nodes, o.(*corev1.Node))
	}
	for _, o := range s.pods.GetStore().List() {
		pods = append(pods, o.(*corev1.Pod))
	}
	for _, o := range s.pdbs.GetStore().List() {
		pdbs = append(pdbs, o.(*policyv1.PodDisruptionBudget))
	}
	if poolsInf != nil {
		for _, o := range poolsInf.GetStore().List() {
			u, ok := o.(*unstructured.Unstructured)
			p := &v1alpha1.NodePool{}
			if ok && runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), p) == nil {
				pools = append(pools, p)
			}
		}
	}
	snap := Build(nodes, pods, pdbs, pools, s.cfg.Clock.Now())
	if mntsInf != nil {
		var ms []*mntv1.Maintenance
		for _, o := range mntsInf.GetStore().List() {
			u, ok := o.(*unstructured.Unstructured)
			m := &mntv1.Maintenance{}
			if ok && runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), m) == nil {
				ms = append(ms, m)
			}
		}
		snap.Maintenances = MaintenanceRows(ms, s.cfg.Clock.Now())
		MarkNodes(&snap)
	}
	snap.Synced, snap.Problem = synced, problem
	return snap
}

// Describe turns an error from the API server into one line a person can act on.
func Describe(err error, resource, server string, timeout time.Duration) string {
	at := ""
	if server != "" {
		at = " at " + server
	}
	var opErr *net.OpError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	switch {
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr):
		return fmt.Sprintf("the API server%s presented a certificate that does not verify (%s): check the kubeconfig's server and certificate-authority", at, oneLine(errors.Unwrap(err).Error()))
	case apierrors.IsForbidden(err):
		return fmt.Sprintf("not allowed to list/watch %s (RBAC): %s", resource, statusMessage(err))
	case apierrors.IsUnauthorized(err):
		return fmt.Sprintf("the API server%s rejected the credentials (401): check the kubeconfig's user", at)
	case errors.Is(err, context.DeadlineExceeded), apierrors.IsTimeout(err), isTimeout(err):
		return fmt.Sprintf("the API server%s did not answer within %s; retrying", at, timeout)
	case errors.As(err, &opErr):
		return fmt.Sprintf("cannot reach the API server%s (%v); retrying", at, opErr.Err)
	}
	return fmt.Sprintf("list/watch %s: %s", resource, oneLine(err.Error()))
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func statusMessage(err error) string {
	var se apierrors.APIStatus
	if errors.As(err, &se) && se.Status().Message != "" {
		return oneLine(se.Status().Message)
	}
	return oneLine(err.Error())
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// trim drops what the dashboard never reads from cached objects.
func trim(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		o.ManagedFields = nil
		o.Spec.Containers, o.Spec.InitContainers, o.Spec.Volumes = nil, nil, nil
		o.Status.ContainerStatuses, o.Status.InitContainerStatuses = nil, nil
	case *corev1.Node:
		o.ManagedFields = nil
		o.Status.Images = nil
	case *policyv1.PodDisruptionBudget:
		o.ManagedFields = nil
	case *unstructured.Unstructured:
		unstructured.RemoveNestedField(o.Object, "metadata", "managedFields")
	}
	return obj, nil
}
