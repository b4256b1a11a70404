package surge

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Unwind restores a surge whose move did not finish the usual way (a run killed between
// the scale-up and the restore; uncordon). Restoring makes the ReplicaSet delete its
// surplus pods itself, and it deletes pods that are not Ready first; so when the restore
// would leave it Ready pods to delete, that many Ready pods are first evicted through the
// Eviction API (the newest first, the pod the surge was moving last): a Ready pod leaves
// only by eviction. Then Restore. It returns the pods it evicted ("namespace/name").
func (s *Surger) Unwind(ctx context.Context, namespace, name string) (Restored, []string, error) {
	key := namespace + "/" + name
	d, err := s.client.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return Restored{Already: true}, nil, nil
	}
	if err != nil {
		return Restored{}, nil, fmt.Errorf("get deployment %s: %w", key, err)
	}
	rec, err := recordOf(d)
	if err != nil || rec == nil || replicas(d) != rec.Replicas+1 {
		res, err := s.Restore(ctx, namespace, name) // nothing to restore, or someone's count to keep
		return res, nil, err
	}
	rsList, err := s.client.AppsV1().ReplicaSets(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return Restored{}, nil, fmt.Errorf("list replicasets in %s: %w", namespace, err)
	}
	owned := map[types.UID]bool{}
	for _, rs := range rsList.Items {
		if ref := metav1.GetControllerOf(&rs); ref != nil && ref.UID == d.UID {
			owned[rs.UID] = true
		}
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return Restored{}, nil, fmt.Errorf("deployment %s: %w", key, err)
	}
	pods, err := s.client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return Restored{}, nil, fmt.Errorf("list pods of deployment %s: %w", key, err)
	}
	var ready []*corev1.Pod
	active := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		ref := metav1.GetControllerOf(p)
		if ref == nil || !owned[ref.UID] || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		active++
		if podReady(p) {
			ready = append(ready, p)
		}
	}
	// The ReplicaSet deletes the pods that are not Ready first; the rest of the surplus
	// would be Ready pods: evict those.
	need := min(active-int(rec.Replicas), len(ready)-int(rec.Replicas))
	sort.SliceStable(ready, func(i, j int) bool {
		mi, mj := string(ready[i].UID) == rec.PodUID, string(ready[j].UID) == rec.PodUID
		if mi != mj {
			return mj // the moved pod last
		}
		return ready[j].CreationTimestamp.Before(&ready[i].CreationTimestamp) // newest first
	})
	var evicted []string
	for i := 0; i < need; i++ {
		p := ready[i]
		err := s.evictSurplus(ctx, p)
		if err != nil && !apierrors.IsNotFound(err) {
			return Restored{}, evicted, fmt.Errorf("evict surplus pod %s/%s before restoring deployment %s (nothing restored; run it again): %w", p.Namespace, p.Name, key, err)
		}
		evicted = append(evicted, p.Namespace+"/"+p.Name)
	}
	res, err := s.Restore(ctx, namespace, name)
	return res, evicted, err
}

// surplusPatience is how long an unwind asks again for a surplus pod's eviction that its
// budget refuses: the budget's status counts the surge's new pod as healthy a moment after
// it is Ready (the disruption controller's lag), and only then allows one disruption.
const surplusPatience = 30 * time.Second

// evictSurplus evicts p, asking again every second while its budget refuses (429) for at
// most surplusPatience.
func (s *Surger) evictSurplus(ctx context.Context, p *corev1.Pod) error {
	deadline := s.clock.Now().Add(surplusPatience)
	for {
		err := s.client.PolicyV1().Evictions(p.Namespace).Evict(ctx, &policyv1.Eviction{
			ObjectMeta:    metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
			DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(p.UID)}},
		})
		if !apierrors.IsTooManyRequests(err) || !s.clock.Now().Before(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-s.clock.After(time.Second):
		}
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
