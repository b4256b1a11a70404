package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// FleetProfile sizes the fleet benchmark: Nodes kwok nodes, about PodsPerNode pods per
// node in Nodes/4 Deployments and StatefulSets under a mix of budgets (StatefulSets never
// one at a time: see newFleet). The drained
// groups scale with Nodes: F1 drains Nodes/10 nodes with each parallel tool and
// Nodes/100 with kubectl sequentially; F3 rolls a pool of Nodes/10 nodes, 10% at a time.
type FleetProfile struct {
	Nodes, PodsPerNode      int
	ReadyDelay, DeleteDelay time.Duration
	// StsDeleteDelay is how long a StatefulSet's pod takes to terminate (kwok's delete
	// delay, by the pod's annotation), above DeleteDelay as for a real stateful workload:
	// a StatefulSet recreates its pod only once the pod is gone, so a disruption
	// controller that lags less than this drops the eviction's entry before the
	// replacement exists, and a hold measures the controller, not 1-s pods. 0: DeleteDelay.
	StsDeleteDelay time.Duration
	// Phases to run, in order: F2 (plan, changes nothing), F1, F5, F3, F4. With F5 the
	// fleet has a tenth more nodes (F5's group); the pods are still Nodes·PodsPerNode.
	Phases []string
	// Tools to run in each phase (nil: every tool): ours (F2, F1, F3, F4), kubectl-par
	// (F1, F4), kubectl-seq (F1).
	Tools []string
	// KubectlBox is how long kubectl's parallel drains may run in each phase (F1, F4): their
	// --timeout. Stopped there, kubectl's wall is a lower bound and so is its ratio to ours.
	// The whole profile is to end within 30 minutes on a 2-core machine, and kubectl
	// parallel is what varies most: F1's took 170 to 432 s on the same machine, and at 300
	// nodes it would take 15 minutes or more. A phase not in the map: 30m, as every other
	// drain of the profile.
	KubectlBox map[string]time.Duration
	// ControllerClientDefaults restarts kube-controller-manager after the set-up with its
	// clients at their defaults (--kube-api-qps=20 --kube-api-burst=30, after the fleet's
	// 1,000 and 2,000 of FleetClusterArgs), so that its
	// controllers, the disruption controller's status writes among them, go through the
	// client's defaults (20 QPS, burst 30), as users run it; the set-up's 10,000 pods
	// keep the fleet's settings (BENCH_KCM_DEFAULT_CLIENT=1).
	ControllerClientDefaults bool
}

// fleetTools are the tools each phase runs.
var fleetTools = map[string][]string{"F2": {"ours"}, "F1": {"ours", "kubectl-par", "kubectl-seq"}, "F3": {"ours"}, "F4": {"ours", "kubectl-par"},
	"F5": {"controller"}}

// tools are the tools of phase that p runs.
func (p FleetProfile) tools(phase string) []string {
	var out []string
	for _, t := range fleetTools[phase] {
		if len(p.Tools) == 0 || slices.Contains(p.Tools, t) {
			out = append(out, t)
		}
	}
	return out
}

// Fleet is the default fleet profile (BENCH_FLEET_NODES overrides the node count, e.g.
// 100 to validate the harness on a small machine).
func Fleet() FleetProfile {
	p := FleetProfile{Nodes: 1000, PodsPerNode: 10, ReadyDelay: 2 * time.Second, DeleteDelay: time.Second, StsDeleteDelay: 5 * time.Second,
		Phases: []string{"F2", "F1", "F5", "F3", "F4"}, KubectlBox: map[string]time.Duration{"F1": 5 * time.Minute, "F4": 3 * time.Minute}}
	if n, err := strconv.Atoi(os.Getenv("BENCH_FLEET_NODES")); err == nil && n >= 20 {
		p.Nodes = n
	}
	p.ControllerClientDefaults = os.Getenv("BENCH_KCM_DEFAULT_CLIENT") == "1"
	return p
}

// FleetClusterArgs are the control plane flags a 1,000-node kwok cluster needs on a small
// machine: controllers and scheduler allowed to create and bind 10,000 pods quickly (the
// defaults, 20 and 50 QPS, would take minutes), an API server that takes the load, and
// kwok's node leases renewed every 50 s instead of 10 s (1,000 leases at 40 s are 100
// writes a second of background load), with the node lifecycle controller's grace period
// raised to match so that no node goes NotReady.
func FleetClusterArgs() map[string][]string {
	return map[string][]string{
		"kube-apiserver": {"--max-requests-inflight=1000", "--max-mutating-requests-inflight=500"},
		"kube-controller-manager": {"--kube-api-qps=1000", "--kube-api-burst=2000", "--concurrent-deployment-syncs=20",
			"--concurrent-replicaset-syncs=20", "--concurrent-statefulset-syncs=20", "--concurrent-gc-syncs=50",
			"--node-monitor-grace-period=600s", "--node-startup-grace-period=600s"},
		"kube-scheduler": {"--kube-api-qps=1000", "--kube-api-burst=2000"},
		"kwok":           {"--node-lease-duration-seconds=200"},
	}
}

// defaultClientArgs are the flags that put kube-controller-manager's clients back at
// their defaults (20 QPS, burst 30), appended after the fleet's own: a later flag wins
// (cluster.RestartWith).
func defaultClientArgs() []string {
	return []string{"--kube-api-qps=20", "--kube-api-burst=30"}
}

// fleet is the fleet's nodes and apps.
type fleet struct {
	p     FleetProfile
	nodes []string
	// kcm reads the disruption controller's queue (nil: its metrics could not be read,
	// and the floor goes without the controller's bound).
	kcm *kcmScraper
	// groups: f1-ours, f1-kpar, f1-kseq, f3-pool, f4-ours, f4-kpar, f5-controller (node
	// label fleet-group).
	groups map[string][]string
	apps   []fleetApp
}

type fleetApp struct {
	ns, name string
	replicas int32
	sts      bool
	pdb      *fixture.PDBSpec // nil: no budget
	budget   string           // how the budget reads, for the report
}

const (
	fleetPool       = "fleet"
	fleetGroupLabel = "fleet-group"
	fleetNamespaces = 10
)

func newFleet(p FleetProfile) *fleet {
	f := &fleet{p: p, groups: map[string][]string{}}
	tenth := p.Nodes / 10
	for i := range p.Nodes {
		name := fmt.Sprintf("f-%04d", i)
		f.nodes = append(f.nodes, name)
		switch {
		case i < tenth:
			f.groups["f1-ours"] = append(f.groups["f1-ours"], name)
		case i < 2*tenth:
			f.groups["f1-kpar"] = append(f.groups["f1-kpar"], name)
		case i < 2*tenth+max(1, tenth/10):
			f.groups["f1-kseq"] = append(f.groups["f1-kseq"], name)
		case i >= 3*tenth && i < 4*tenth:
			f.groups["f3-pool"] = append(f.groups["f3-pool"], name)
		case i >= 4*tenth && i < 7*tenth:
			f.groups["f4-ours"] = append(f.groups["f4-ours"], name)
		case i >= 7*tenth:
			f.groups["f4-kpar"] = append(f.groups["f4-kpar"], name)
		}
	}
	if slices.Contains(p.Phases, "F5") {
		for i := range tenth {
			name := fmt.Sprintf("f-%04d", p.Nodes+i)
			f.nodes = append(f.nodes, name)
			f.groups["f5-controller"] = append(f.groups["f5-controller"], name)
		}
	}
	napps := max(4, p.Nodes/4)
	replicas := int32(p.Nodes * p.PodsPerNode / napps)
	for i := range napps {
		a := fleetApp{ns: fmt.Sprintf("fleet-%d", i%fleetNamespaces), name: fmt.Sprintf("app-%03d", i), replicas: replicas, sts: i%4 == 3}
		budget := i % 10
		if a.sts && (budget == 1 || budget == 7) {
			// A StatefulSet's evicted pod comes back under its own name, and the
			// disruption controller then usually counts it as disrupted until the
			// eviction's disruptedPods entry expires, 2 minutes later: under a
			// one-at-a-time budget each of its pods costs 2 minutes whatever the tool
			// (the realistic profile's W3 measures it). The fleet's StatefulSets are
			// under 10% so that F3 measures the rolling drain, not 2-minute timers.
			budget = 3
		}
		switch budget {
		case 0, 1, 2:
			a.pdb, a.budget = &fixture.PDBSpec{MaxUnavailable: fixture.Int(1)}, "maxUnavailable: 1"
		case 3, 4, 5:
			a.pdb, a.budget = &fixture.PDBSpec{MaxUnavailable: fixture.Percent("10%")}, "maxUnavailable: 10%"
		case 6, 7, 8:
			a.pdb, a.budget = &fixture.PDBSpec{MinAvailable: fixture.Int(replicas - 1)}, fmt.Sprintf("minAvailable: %d", replicas-1)
		default:
			a.budget = "none"
		}
		f.apps = append(f.apps, a)
	}
	return f
}

// groupOf is the fleet-group label of a node ("" for the rest).
func (f *fleet) groupOf(name string) string {
	for g, ns := range f.groups {
		for _, n := range ns {
			if n == name {
				return g
			}
		}
	}
	return ""
}

// parallel runs fn(i) for i in [0, n) on k goroutines and returns the first error.
func parallel(n, k int, fn func(i int) error) error {
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	next := make(chan int)
	for range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// setUp creates the nodes (pool members carry the pool's role label), the namespaces,
// the workloads and their budgets, and waits until everything is settled.
func (f *fleet) setUp(ctx context.Context, c kubernetes.Interface, logf func(string, ...any)) error {
	began := time.Now()
	err := parallel(len(f.nodes), 16, func(i int) error {
		name := f.nodes[i]
		spec := fixture.NodeSpec{Labels: map[string]string{"bench": "fleet"}}
		if g := f.groupOf(name); g != "" {
			spec.Labels[fleetGroupLabel] = g
			if g == "f3-pool" {
				spec.Pools = []string{fleetPool}
			}
		}
		if _, err := c.CoreV1().Nodes().Create(ctx, fixture.Node(name, spec), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create node %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := waitFor(ctx, 3*time.Second, func() (bool, string, error) {
		nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "bench=fleet", ResourceVersion: "0"})
		if err != nil {
			return false, "", err
		}
		ready := 0
		for i := range nodes.Items {
			if fixture.NodeReady(&nodes.Items[i]) {
				ready++
			}
		}
		return ready == len(f.nodes), fmt.Sprintf("%d/%d nodes Ready", ready, len(f.nodes)), nil
	}, logf); err != nil {
		return err
	}
	logf("fleet: %d nodes Ready in %s", len(f.nodes), time.Since(began).Round(time.Second))
	for i := range fleetNamespaces {
		if err := fixture.NamedNamespace(ctx, c, fmt.Sprintf("fleet-%d", i)); err != nil {
			return err
		}
	}
	o := fixture.PodOptions{NodeSelector: map[string]string{"bench": "fleet"}, ReadyDelay: f.p.ReadyDelay, DeleteDelay: f.p.DeleteDelay}
	err = parallel(len(f.apps), 8, func(i int) error {
		a := f.apps[i]
		var err error
		if a.sts {
			so := o
			if f.p.StsDeleteDelay > 0 {
				so.DeleteDelay = f.p.StsDeleteDelay
			}
			_, err = fixture.StatefulSet(ctx, c, a.ns, a.name, a.replicas, so)
		} else {
			_, err = fixture.Deployment(ctx, c, a.ns, a.name, a.replicas, o)
		}
		if err == nil && a.pdb != nil {
			s := *a.pdb
			s.App = a.name
			_, err = fixture.PDB(ctx, c, a.ns, a.name, s)
		}
		return err
	})
	if err != nil {
		return err
	}
	// A node agent on every node, as in any real fleet: kubectl's filters ask after each of
	// its pods' DaemonSet (one GET per pod), so a plan over the fleet pays for it.
	if _, err := fixture.DaemonSet(ctx, c, "fleet-0", fleetAgent, fixture.PodOptions{NodeSelector: map[string]string{"bench": "fleet"}}); err != nil {
		return err
	}
	return f.settle(ctx, c, logf)
}

// fleetAgent is the fleet's DaemonSet (in namespace fleet-0): one pod per node, never evicted.
const fleetAgent = "agent"

// waitFor polls cond every interval until it holds, logging its progress every 30 s.
func waitFor(ctx context.Context, every time.Duration, cond func() (bool, string, error), logf func(string, ...any)) error {
	lastLog := time.Now()
	for {
		ok, progress, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Since(lastLog) > 30*time.Second {
			logf("fleet: waiting: %s", progress)
			lastLog = time.Now()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting (%s): %w", progress, ctx.Err())
		case <-time.After(every):
		}
	}
}

// podsOn counts, per app, the live pods on the named nodes that a drain evicts (not the
// DaemonSet's).
func podsOn(ctx context.Context, c kubernetes.Interface, nodes []string) (map[string]int, error) {
	on := map[string]bool{}
	for _, n := range nodes {
		on[n] = true
	}
	pods, err := c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	out := map[string]int{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "DaemonSet" {
			continue // stays on its node
		}
		if on[p.Spec.NodeName] && p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out[p.Labels["app"]]++
		}
	}
	return out, nil
}
