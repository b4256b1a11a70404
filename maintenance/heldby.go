package maintenance

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// heldBy names another Maintenance that holds some of names, and which. Who holds a node
// is what its record says (noderecord, the one answer every run reads): a record whose
// run is "maintenance/<other>" holds the node while other is Running or Paused (a run a
// former leader started holds its nodes until this process resumes it). A run of this
// process holds its nodes from its admission, before it has written their records.
func (r *Reconciler) heldBy(ctx context.Context, self string, names []string) (string, []string, error) {
	held := map[string][]string{}
	r.mu.Lock()
	for _, n := range names {
		if h := r.holder[n]; h != "" && h != self {
			held[h] = append(held[h], n)
		}
	}
	r.mu.Unlock()
	if len(held) == 0 {
		var err error
		if held, err = r.recordedHolders(ctx, self, names); err != nil {
			return "", nil, err
		}
	}
	if len(held) == 0 {
		return "", nil, nil
	}
	others := make([]string, 0, len(held))
	for o := range held {
		others = append(others, o)
	}
	sort.Strings(others)
	return others[0], held[others[0]], nil
}

// recordedHolders are the Maintenances other than self whose runs the records of names
// name, and which of the nodes each holds; only those Running or Paused.
func (r *Reconciler) recordedHolders(ctx context.Context, self string, names []string) (map[string][]string, error) {
	held := map[string][]string{}
	for _, n := range names {
		node := &corev1.Node{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: n}, node); err != nil {
			if apierrors.IsNotFound(err) {
				continue // the run says the node is missing
			}
			return nil, fmt.Errorf("get node %s: %w", n, err)
		}
		rec := noderecord.Read(node, "")
		other, ok := rec.Run.Maintenance()
		if ok && other != self {
			held[other] = append(held[other], n)
		}
	}
	for other := range held {
		m := &v1alpha1.Maintenance{}
		err := r.Client.Get(ctx, client.ObjectKey{Name: other}, m)
		switch {
		case apierrors.IsNotFound(err):
			delete(held, other) // a record its deleted object left: it holds nothing
		case err != nil:
			return nil, fmt.Errorf("get maintenance %s: %w", other, err)
		case m.Status.Phase != v1alpha1.PhaseRunning && m.Status.Phase != v1alpha1.PhasePaused:
			delete(held, other)
		}
	}
	return held, nil
}
