package surge

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

const (
	// Annotation on a surged Deployment holds the Record of the surge (JSON).
	Annotation = "kubectl-maintenance.io/surge"
	// LabelSurged ("true") marks a surged Deployment, so that Pending finds it with a
	// label selector: `kubectl get deployments -A -l kubectl-maintenance.io/surged`.
	LabelSurged = "kubectl-maintenance.io/surged"
	// FieldManager is the field manager of every write (the tool's own).
	FieldManager = "kubectl-maintenance"
)

// Record is what a surged Deployment's annotation holds.
type Record struct {
	// Replicas is the count to restore.
	Replicas int32 `json:"replicas"`
	// Pod is the name of the pod the surge moves (in the Deployment's namespace), PodUID
	// its UID, Node the node it was on.
	Pod    string    `json:"pod"`
	PodUID string    `json:"podUID"`
	Node   string    `json:"node"`
	Since  time.Time `json:"since"`
}

func recordOf(d *appsv1.Deployment) (*Record, error) {
	v, ok := d.Annotations[Annotation]
	if !ok {
		return nil, nil
	}
	var r Record
	if err := json.Unmarshal([]byte(v), &r); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", Annotation, err)
	}
	return &r, nil
}

// Start records the replica count in the Deployment's annotation and scales it to one
// more, in one patch (so that no state has one without the other). A Resumed target is
// left as it is unless its count was brought back meanwhile. It reports the count it
// scaled to.
func (s *Surger) Start(ctx context.Context, t *Target, now time.Time) (int32, error) {
	_, name, _ := cutKey(t.Pod)
	rec := Record{Replicas: t.Replicas, Pod: name, PodUID: t.PodUID, Node: t.Node, Since: now.UTC().Truncate(time.Second)}
	for attempt := 0; ; attempt++ {
		d, err := s.client.AppsV1().Deployments(t.Namespace).Get(ctx, t.Name, metav1.GetOptions{})
		if err != nil {
			return 0, fmt.Errorf("get deployment %s: %w", t.Key(), err)
		}
		old, err := recordOf(d)
		if err != nil {
			return 0, err
		}
		switch {
		case old != nil && old.PodUID != t.PodUID:
			return 0, fmt.Errorf("deployment %s is already surged for pod %s", t.Key(), old.Pod)
		case old != nil && replicas(d) >= old.Replicas+1:
			return replicas(d), nil // started by an earlier run
		case old != nil:
			rec = *old
		case replicas(d) != t.Replicas:
			return 0, fmt.Errorf("deployment %s was scaled to %d since it was checked", t.Key(), replicas(d))
		}
		val, _ := json.Marshal(rec)
		patch := map[string]any{
			"metadata": map[string]any{
				"resourceVersion": d.ResourceVersion,
				"labels":          map[string]any{LabelSurged: "true"},
				"annotations":     map[string]any{Annotation: string(val)},
			},
			"spec": map[string]any{"replicas": rec.Replicas + 1},
		}
		err = s.patch(ctx, t.Namespace, t.Name, patch)
		if apierrors.IsConflict(err) && attempt < 5 {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("scale deployment %s to %d: %w", t.Key(), rec.Replicas+1, err)
		}
		return rec.Replicas + 1, nil
	}
}

// WaitReady waits until a pod of the Deployment other than the one being moved is Ready,
// not terminating, on another node, and returns it ("namespace/name" and its node).
func (s *Surger) WaitReady(ctx context.Context, t *Target) (pod, node string, err error) {
	d, err := s.client.AppsV1().Deployments(t.Namespace).Get(ctx, t.Name, metav1.GetOptions{})
	if err != nil {
		return "", "", fmt.Errorf("get deployment %s: %w", t.Key(), err)
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return "", "", fmt.Errorf("deployment %s: %w", t.Key(), err)
	}
	pods := s.client.CoreV1().Pods(t.Namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = sel.String()
			return pods.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = sel.String()
			return pods.Watch(ctx, o)
		},
	}
	var found *corev1.Pod
	_, err = watchtools.UntilWithSync(ctx, lw, &corev1.Pod{}, nil, func(ev watch.Event) (bool, error) {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok || ev.Type == watch.Deleted || !surgeReady(p, t) {
			return false, nil
		}
		found = p
		return true, nil
	})
	if err != nil {
		return "", "", fmt.Errorf("wait for a Ready pod of deployment %s: %w", t.Key(), err)
	}
	return found.Namespace + "/" + found.Name, found.Spec.NodeName, nil
}

// surgeReady reports whether p is a Ready pod, not terminating, other than the one to move
// and on another node.
func surgeReady(p *corev1.Pod, t *Target) bool {
	return string(p.UID) != t.PodUID && p.DeletionTimestamp == nil && p.Spec.NodeName != "" && p.Spec.NodeName != t.Node && podReady(p)
}

// Restored is what Restore did.
type Restored struct {
	// Replicas is the count the Deployment has now.
	Replicas int32
	// Surged is the count it had (the recorded count + 1 when nobody changed it).
	Surged int32
	// Changed is true when someone scaled the Deployment during the surge: its count is
	// left as they set it; only the record is removed.
	Changed bool
	// Already is true when there was no record (restored before).
	Already bool
}

// Restore brings the Deployment back to the recorded count and removes the record and
// the label, in one patch. Call it once the old pod's eviction is accepted: the old pod
// is terminating and no longer counted by the ReplicaSet, so the Deployment at its
// recorded count has as many pods as it wants and nothing is created or deleted. A
// Deployment someone scaled meanwhile keeps their count. Without a record it does
// nothing (Already).
func (s *Surger) Restore(ctx context.Context, namespace, name string) (Restored, error) {
	key := namespace + "/" + name
	for attempt := 0; ; attempt++ {
		d, err := s.client.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return Restored{Already: true}, nil
		}
		if err != nil {
			return Restored{}, fmt.Errorf("get deployment %s: %w", key, err)
		}
		rec, err := recordOf(d)
		if err != nil || rec == nil {
			// An unreadable record can't be restored from; it is removed below only when
			// readable, so a person sees it.
			return Restored{Already: rec == nil && err == nil, Replicas: replicas(d)}, err
		}
		res := Restored{Replicas: rec.Replicas, Surged: replicas(d)}
		spec := map[string]any{"replicas": rec.Replicas}
		if replicas(d) != rec.Replicas+1 {
			res.Replicas, res.Changed, spec = replicas(d), true, nil
		}
		patch := map[string]any{
			"metadata": map[string]any{
				"resourceVersion": d.ResourceVersion,
				"labels":          map[string]any{LabelSurged: nil},
				"annotations":     map[string]any{Annotation: nil},
			},
		}
		if spec != nil {
			patch["spec"] = spec
		}
		err = s.patch(ctx, namespace, name, patch)
		if apierrors.IsConflict(err) && attempt < 5 {
			continue
		}
		if err != nil {
			return Restored{}, fmt.Errorf("restore deployment %s to %d replicas: %w", key, rec.Replicas, err)
		}
		return res, nil
	}
}

// Pending lists the surges in progress (Deployments carrying a record) for pods of the
// given nodes (every node when nodes is nil), as Resumed targets.
func (s *Surger) Pending(ctx context.Context, nodes []string) ([]*Target, error) {
	list, err := s.client.AppsV1().Deployments(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{LabelSurged: "true"}).String()})
	if err != nil {
		return nil, fmt.Errorf("list surged deployments: %w", err)
	}
	want := map[string]bool{}
	for _, n := range nodes {
		want[n] = true
	}
	var out []*Target
	for i := range list.Items {
		d := &list.Items[i]
		rec, err := recordOf(d)
		if err != nil || rec == nil || (nodes != nil && !want[rec.Node]) {
			continue
		}
		out = append(out, &Target{Namespace: d.Namespace, Name: d.Name, Replicas: rec.Replicas,
			Pod: d.Namespace + "/" + rec.Pod, PodUID: rec.PodUID, Node: rec.Node, Resumed: true})
	}
	return out, nil
}

// PodAlive reports whether the pod a surge moves still exists, is not terminating, and
// is the same pod (UID).
func (s *Surger) PodAlive(ctx context.Context, t *Target) (bool, error) {
	ns, name, _ := cutKey(t.Pod)
	p, err := s.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get pod %s: %w", t.Pod, err)
	}
	return string(p.UID) == t.PodUID && p.DeletionTimestamp == nil, nil
}

func (s *Surger) patch(ctx context.Context, namespace, name string, patch map[string]any) error {
	b, err := json.Marshal(patch)
	if err != nil {
		return fmt.Errorf("encode patch: %w", err)
	}
	_, err = s.client.AppsV1().Deployments(namespace).Patch(ctx, name, types.MergePatchType, b,
		metav1.PatchOptions{FieldManager: FieldManager})
	return err
}

func cutKey(key string) (ns, name string, ok bool) {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return key[:i], key[i+1:], true
		}
	}
	return "", key, false
}
