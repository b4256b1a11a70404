package surge

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
)

// Surger surges Deployments. Build it with New.
type Surger struct {
	client     kubernetes.Interface
	resumeOnly bool
	clock      clock.Clock
}

// New returns a Surger that talks to the API server through c.
func New(c kubernetes.Interface) *Surger { return &Surger{client: c, clock: clock.RealClock{}} }

// WithClock returns a copy of s on clock c (the waits of an unwind's surplus eviction).
func (s *Surger) WithClock(c clock.Clock) *Surger { cp := *s; cp.clock = c; return &cp }

// ResumeOnly returns a copy of s that a drain uses only to finish and restore the surges
// an earlier run left (Starts is false): a drain without --surge still restores them.
func (s *Surger) ResumeOnly() *Surger { cp := *s; cp.resumeOnly = true; return &cp }

// Starts reports whether a drain may start new surges (--surge).
func (s *Surger) Starts() bool { return !s.resumeOnly }

// Target is the Deployment of a pod to surge.
type Target struct {
	// Namespace and Name are the Deployment's.
	Namespace, Name string
	// Replicas is the count to restore (the recorded one when Resumed).
	Replicas int32
	// Pod is the pod to move ("namespace/name"), PodUID its UID, Node the node it is on.
	Pod    string
	PodUID string
	Node   string
	// Resumed is true when an earlier run already recorded and scaled this surge.
	Resumed bool
}

// Key is the Deployment's "namespace/name".
func (t *Target) Key() string { return t.Namespace + "/" + t.Name }

// RefusedError is a pod --surge cannot move, in one line naming the pod, why, and what
// to do. Nothing was changed.
type RefusedError struct {
	Pod    string
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("pod %s cannot be surged: %s", e.Pod, e.Reason)
}

// Blocked marks a refusal as blocked by policy (exit 3).
func (e *RefusedError) Blocked() bool { return true }

// Helps tells whether one more Ready replica makes budget b allow a disruption, and if
// not, why, as a sentence with the remedy. It follows the disruption controller
// (pkg/controller/disruption: disruptionsAllowed = currentHealthy - desiredHealthy, with
// desiredHealthy = expectedPods - maxUnavailable, or minAvailable scaled on expectedPods
// for a percentage, or minAvailable itself for a number). Under maxUnavailable 0 (or 0%)
// or minAvailable 100%, desiredHealthy grows with the replicas, so a surge never helps.
func Helps(b *policyv1.PodDisruptionBudget) (bool, string) {
	key := b.Namespace + "/" + b.Name
	st := b.Status
	current, expected := st.CurrentHealthy+1, st.ExpectedPods+1
	var desired int32
	switch {
	case b.Spec.MaxUnavailable != nil:
		mu, err := intstr.GetScaledValueFromIntOrPercent(b.Spec.MaxUnavailable, int(expected), true)
		if err != nil {
			return false, fmt.Sprintf("pdb %s has an invalid maxUnavailable: %v", key, err)
		}
		desired = max(0, expected-int32(mu))
		if mu == 0 {
			return false, fmt.Sprintf("pdb %s has maxUnavailable %s: desiredHealthy is expectedPods - 0, so one more replica raises it too and disruptionsAllowed stays 0 at any scale; relax the budget (maxUnavailable: 1, or minAvailable: 1)",
				key, b.Spec.MaxUnavailable.String())
		}
	case b.Spec.MinAvailable != nil && b.Spec.MinAvailable.Type == intstr.Int:
		desired = b.Spec.MinAvailable.IntVal
	case b.Spec.MinAvailable != nil:
		if strings.TrimSpace(b.Spec.MinAvailable.StrVal) == "100%" {
			return false, fmt.Sprintf("pdb %s has minAvailable 100%%: desiredHealthy is every expected pod, so one more replica raises it too and disruptionsAllowed stays 0 at any scale; relax the budget (minAvailable: 1, or maxUnavailable: 1)", key)
		}
		ma, err := intstr.GetScaledValueFromIntOrPercent(b.Spec.MinAvailable, int(expected), true)
		if err != nil {
			return false, fmt.Sprintf("pdb %s has an invalid minAvailable: %v", key, err)
		}
		desired = int32(ma)
	default:
		return false, fmt.Sprintf("pdb %s sets neither minAvailable nor maxUnavailable", key)
	}
	if current-desired < 1 {
		return false, fmt.Sprintf("pdb %s would need %d healthy pods with one more replica and have %d: a surge of one does not make it allow a disruption; relax the budget",
			key, desired, current)
	}
	return true, ""
}

// Check decides whether pod, whose budget b never allows a disruption, can be surged,
// and returns its Deployment. A *RefusedError says why not in one line. A Deployment
// that already carries this tool's record for the same pod is a surge an earlier run
// started (Resumed). Check changes nothing.
func (s *Surger) Check(ctx context.Context, pod *corev1.Pod, b *policyv1.PodDisruptionBudget) (*Target, error) {
	key := pod.Namespace + "/" + pod.Name
	refuse := func(format string, a ...any) (*Target, error) {
		return nil, &RefusedError{Pod: key, Reason: fmt.Sprintf(format, a...)}
	}
	ref := metav1.GetControllerOf(pod)
	switch {
	case ref == nil:
		return refuse("it has no controller; only a Deployment's pod can be surged")
	case ref.Kind == "StatefulSet":
		return refuse("it belongs to StatefulSet %s/%s, and StatefulSets are never surged (a second pod cannot take the same identity); relax the budget", pod.Namespace, ref.Name)
	case ref.Kind != "ReplicaSet":
		return refuse("it belongs to %s %s/%s; only a Deployment's pod can be surged", ref.Kind, pod.Namespace, ref.Name)
	}
	rs, err := s.client.AppsV1().ReplicaSets(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get replicaset %s/%s: %w", pod.Namespace, ref.Name, err)
	}
	dref := metav1.GetControllerOf(rs)
	if dref == nil || dref.Kind != "Deployment" {
		return refuse("its ReplicaSet %s/%s has no Deployment; only a Deployment's pod can be surged", pod.Namespace, rs.Name)
	}
	d, err := s.client.AppsV1().Deployments(pod.Namespace).Get(ctx, dref.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get deployment %s/%s: %w", pod.Namespace, dref.Name, err)
	}
	t := &Target{Namespace: d.Namespace, Name: d.Name, Replicas: replicas(d), Pod: key, PodUID: string(pod.UID), Node: pod.Spec.NodeName}
	rec, err := recordOf(d)
	if err != nil {
		return refuse("deployment %s carries an unreadable %s annotation (%v); remove it", t.Key(), Annotation, err)
	}
	if rec != nil {
		if rec.PodUID != t.PodUID {
			return refuse("deployment %s is already surged for pod %s/%s on node %s; run `kubectl maintenance uncordon %s` or the drain of that node again to finish it",
				t.Key(), d.Namespace, rec.Pod, rec.Node, rec.Node)
		}
		t.Replicas, t.Resumed = rec.Replicas, true
	} else if t.Replicas != 1 {
		return refuse("deployment %s has %d replicas; --surge moves the pod of a one-replica Deployment; relax the budget", t.Key(), t.Replicas)
	}
	if ok, why := Helps(b); !ok && !t.Resumed {
		return refuse("%s", why)
	}
	hpa, err := s.autoscaler(ctx, d)
	if err != nil {
		return nil, err
	}
	if hpa != "" {
		return refuse("deployment %s is scaled by HorizontalPodAutoscaler %s/%s, which would undo the surge; relax the budget instead", t.Key(), d.Namespace, hpa)
	}
	return t, nil
}

// autoscaler names the autoscaling/v2 HorizontalPodAutoscaler whose scaleTargetRef is d
// ("" when none).
func (s *Surger) autoscaler(ctx context.Context, d *appsv1.Deployment) (string, error) {
	list, err := s.client.AutoscalingV2().HorizontalPodAutoscalers(d.Namespace).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil // the API is not served
	}
	if err != nil {
		return "", fmt.Errorf("list horizontalpodautoscalers in %s: %w", d.Namespace, err)
	}
	for _, h := range list.Items {
		ref := h.Spec.ScaleTargetRef
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			continue
		}
		if ref.Kind == "Deployment" && ref.Name == d.Name && (gv.Group == "apps" || ref.APIVersion == "") {
			return h.Name, nil
		}
	}
	return "", nil
}

func replicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}
