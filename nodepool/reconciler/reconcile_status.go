package reconciler

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// Condition types of a NodePool's status.
const (
	// ConditionReady: every member carries the pool's labels and taints.
	ConditionReady = "Ready"
	// ConditionDegraded: something keeps the pool from being applied (Reason Conflict,
	// NoExecuteHeldBack or Error; the message names nodes, keys and values).
	ConditionDegraded = "Degraded"
	// ConditionRollout: a NoExecute rollout (pool sync --rollout): progress, and the
	// budget it waits on.
	ConditionRollout = "RolloutProgressing"
)

// writeStatus writes the pool's status only when it changed, so an idle pool costs no
// write.
func (r *Reconciler) writeStatus(ctx context.Context, p *v1alpha1.NodePool, st *poolState) error {
	before := p.Status.DeepCopy()
	p.Status.ObservedGeneration = p.Generation
	p.Status.Nodes, p.Status.InMaintenance = st.members, st.inMaintenance
	ready := metav1.Condition{Type: ConditionReady, Status: metav1.ConditionTrue, Reason: "Applied", ObservedGeneration: p.Generation,
		Message: fmt.Sprintf("%d node(s) carry the pool's labels and taints", st.members)}
	if len(st.removes) > 0 {
		sort.Strings(st.removes)
		ready.Message += fmt.Sprintf("; its NoExecute taints removed DaemonSet/mirror pod(s) %s", strings.Join(st.removes, ", "))
	}
	degraded := metav1.Condition{Type: ConditionDegraded, Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: p.Generation}
	if len(st.problems) > 0 {
		sort.Strings(st.problems)
		msg := strings.Join(st.problems, "; ")
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, "NotApplied", msg
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, degradedReason(st), msg
	}
	meta.SetStatusCondition(&p.Status.Conditions, ready)
	meta.SetStatusCondition(&p.Status.Conditions, degraded)
	SetHealth(&p.Status, p.Generation)
	if reflect.DeepEqual(before, &p.Status) {
		return nil
	}
	want := p.Status.DeepCopy()
	obj := p
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		err := r.Client.Status().Update(ctx, obj)
		if !apierrors.IsConflict(err) {
			return err
		}
		// Another writer (a second pool sync, the controller) updated the pool since it
		// was read: the same status on the fresh object, unless its spec moved on (the
		// sync of the newer generation writes that one's status).
		fresh := &v1alpha1.NodePool{}
		if gerr := r.Client.Get(ctx, client.ObjectKeyFromObject(p), fresh); gerr != nil {
			return gerr
		}
		if fresh.Generation != p.Generation {
			return nil
		}
		fresh.Status = *want.DeepCopy()
		obj = fresh
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("update status of pool %s: %w", p.Name, err)
	}
	return nil
}

func degradedReason(st *poolState) string {
	if st.heldBack > 0 {
		return "NoExecuteHeldBack"
	}
	for _, p := range st.problems {
		if strings.Contains(p, "conflict") || strings.Contains(p, "outside any pool") || strings.Contains(p, "by hand") {
			return "Conflict"
		}
	}
	return "Error"
}
