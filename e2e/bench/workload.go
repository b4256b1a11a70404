package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// workload is one fresh copy of a phase's objects.
type workload struct {
	id          string // namespace and node name prefix
	drain       []string
	spare       []string
	mainPDB     string
	termination time.Duration
	// apps are the PDB names (each PDB is named after its app).
	apps []string
}

// setUp creates the phase's drain nodes, its workload (all on those nodes), its PDBs,
// and then the spare nodes that take the replacements. It returns when every pod is
// Ready and every PDB's status is current.
func setUp(ctx context.Context, c kubernetes.Interface, p Profile, phase, tool string) (*workload, error) {
	w := &workload{id: strings.ToLower(phase + "-" + strings.ReplaceAll(tool, "kubectl-", "k"))}
	for i := range p.DrainNodes {
		w.drain = append(w.drain, fmt.Sprintf("%s-d%d", w.id, i))
	}
	for i := range p.SpareNodes {
		w.spare = append(w.spare, fmt.Sprintf("%s-s%d", w.id, i))
	}
	label := map[string]string{"bench": w.id}
	if _, err := fixture.CreateNodes(ctx, c, fixture.NodeSpec{Names: w.drain, Labels: label}); err != nil {
		return nil, err
	}
	if err := fixture.NamedNamespace(ctx, c, w.id); err != nil {
		return nil, err
	}
	o := fixture.PodOptions{NodeSelector: label, ReadyDelay: p.ReadyDelay, DeleteDelay: p.DeleteDelay}
	w.termination = p.DeleteDelay
	type item struct {
		app      string
		replicas int32
		pdb      *fixture.PDBSpec
		sts      bool
		opts     fixture.PodOptions
	}
	var items []item
	d := int32(p.DrainNodes)
	switch phase {
	case "W1":
		items = append(items, item{app: "w1", replicas: 4 * d, pdb: &fixture.PDBSpec{MaxUnavailable: fixture.Int(1)}, opts: o})
		w.mainPDB = "w1"
	case "W2":
		long := o
		long.DeleteDelay = 10 * time.Second
		w.termination = long.DeleteDelay
		for i := range 8 * p.DrainNodes {
			items = append(items, item{app: fmt.Sprintf("single-%d", i), replicas: 1, pdb: &fixture.PDBSpec{MaxUnavailable: fixture.Int(1)}, opts: long})
		}
		items = append(items, item{app: "big", replicas: 3 * d, pdb: &fixture.PDBSpec{MaxUnavailable: fixture.Percent("25%")}, opts: long},
			item{app: "nopdb", replicas: d, opts: long})
		w.mainPDB = "big"
	case "W3":
		spread := o
		spread.SpreadByHostname = true
		items = append(items, item{app: "db", replicas: d, pdb: &fixture.PDBSpec{MaxUnavailable: fixture.Int(1)}, sts: true, opts: spread})
		w.mainPDB = "db"
	default:
		return nil, fmt.Errorf("unknown phase %q (want W1, W2 or W3)", phase)
	}
	for _, it := range items {
		var err error
		if it.sts {
			_, err = fixture.StatefulSet(ctx, c, w.id, it.app, it.replicas, it.opts)
		} else {
			_, err = fixture.Deployment(ctx, c, w.id, it.app, it.replicas, it.opts)
		}
		if err != nil {
			return nil, err
		}
	}
	if _, err := fixture.DaemonSet(ctx, c, w.id, "agent", fixture.PodOptions{NodeSelector: label}); err != nil {
		return nil, err
	}
	for _, it := range items {
		if _, err := fixture.WaitPodsReady(ctx, c, w.id, "app="+it.app, int(it.replicas)); err != nil {
			return nil, err
		}
		if it.pdb != nil {
			it.pdb.App = it.app
			if _, err := fixture.PDB(ctx, c, w.id, it.app, *it.pdb); err != nil {
				return nil, err
			}
			w.apps = append(w.apps, it.app)
		}
	}
	for _, app := range w.apps {
		if _, err := fixture.WaitPDB(ctx, c, w.id, app, func(p *policyv1.PodDisruptionBudget) bool { return p.Status.ExpectedPods > 0 }); err != nil {
			return nil, err
		}
	}
	if _, err := fixture.CreateNodes(ctx, c, fixture.NodeSpec{Names: w.spare, Labels: label}); err != nil {
		return nil, err
	}
	return w, nil
}

// tearDown deletes the workload's namespace and nodes.
func (w *workload) tearDown(c kubernetes.Interface) {
	ctx := context.Background()
	_ = c.CoreV1().Namespaces().Delete(ctx, w.id, metav1.DeleteOptions{})
	fixture.DeleteNodes(ctx, c, append(append([]string(nil), w.drain...), w.spare...)...)
}
