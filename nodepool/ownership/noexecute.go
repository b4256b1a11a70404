package ownership

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
)

// mirrorAnnotation marks a static pod's mirror on the API server.
const mirrorAnnotation = corev1.MirrorPodAnnotationKey

// Victims are the pods a new NoExecute taint would remove from a node. The taint manager
// deletes them without any PodDisruptionBudget check, so they must be gone (drained
// through the Eviction API) before the taint is written.
type Victims struct {
	// Blocking are ordinary pods (not DaemonSet, not mirror): the taint must wait for them.
	Blocking []string
	// Named are DaemonSet and mirror pods: a drain never removes them, the taint will
	// (a DaemonSet does not put its pod back on a node whose taint it does not tolerate).
	// They are not blockers; a person is told about them.
	Named []string
}

// Empty reports whether no pod would be removed.
func (v Victims) Empty() bool { return len(v.Blocking) == 0 && len(v.Named) == 0 }

// NewNoExecute returns the NoExecute taints in after that before lacks (by key, effect
// and value).
func NewNoExecute(before, after []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range after {
		if t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if cur, ok := findTaint(before, t); ok && cur.Value == t.Value {
			continue
		}
		out = append(out, t)
	}
	return out
}

// NoExecuteVictims sorts the pods that taints (their NoExecute ones) would remove, as the
// taint manager decides: a pod is removed when some NoExecute taint has no matching
// toleration, or when a matching toleration has tolerationSeconds (removed after that
// long, still without a budget check). Finished and terminating pods are skipped.
func NoExecuteVictims(pods []corev1.Pod, taints []corev1.Taint) Victims {
	var noExec []corev1.Taint
	for _, t := range taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			noExec = append(noExec, t)
		}
	}
	var v Victims
	if len(noExec) == 0 {
		return v
	}
	logger := klog.Background()
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil {
			continue
		}
		why := removedBy(logger, p, noExec)
		if why == "" {
			continue
		}
		name := p.Namespace + "/" + p.Name + " (" + why + ")"
		if isDaemonSetPod(p) || isMirrorPod(p) {
			v.Named = append(v.Named, name)
		} else {
			v.Blocking = append(v.Blocking, name)
		}
	}
	sort.Strings(v.Blocking)
	sort.Strings(v.Named)
	return v
}

// removedBy says why the taints remove the pod ("" when they don't).
func removedBy(logger klog.Logger, p *corev1.Pod, noExec []corev1.Taint) string {
	if t, untolerated := corev1helpers.FindMatchingUntoleratedTaint(logger, noExec, p.Spec.Tolerations, nil, false); untolerated {
		return fmt.Sprintf("does not tolerate %s", RenderTaint(t))
	}
	// Every taint is tolerated; the first matching toleration of each taint counts, as in
	// the taint manager, and the smallest tolerationSeconds among them is when it acts.
	least := int64(-1)
	var at corev1.Taint
	for i := range noExec {
		for j := range p.Spec.Tolerations {
			tol := &p.Spec.Tolerations[j]
			if !corev1helpers.TolerationsTolerateTaint(logger, []corev1.Toleration{*tol}, &noExec[i], false) {
				continue
			}
			if s := tol.TolerationSeconds; s != nil && (least < 0 || *s < least) {
				least, at = max(*s, 0), noExec[i]
			}
			break
		}
	}
	if least < 0 {
		return ""
	}
	return fmt.Sprintf("tolerates %s for %ds only", RenderTaint(at), least)
}

// RenderTaint writes a taint as kubectl taint takes it: key[=value]:Effect.
func RenderTaint(t corev1.Taint) string {
	if t.Value == "" {
		return fmt.Sprintf("%s:%s", t.Key, t.Effect)
	}
	return fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect)
}

func isDaemonSetPod(p *corev1.Pod) bool {
	c := metav1.GetControllerOf(p)
	return c != nil && c.Kind == "DaemonSet"
}

func isMirrorPod(p *corev1.Pod) bool {
	_, ok := p.Annotations[mirrorAnnotation]
	return ok
}

// PodsOnNode lists the pods bound to node (one list call, field selector).
func PodsOnNode(ctx context.Context, c kubernetes.Interface, node string) ([]corev1.Pod, error) {
	list, err := c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return nil, fmt.Errorf("list pods on node %s: %w", node, err)
	}
	return list.Items, nil
}

// VictimsError stops a change that would add a NoExecute taint to a node still running
// pods that don't tolerate it: the taint manager would delete them with no budget check.
type VictimsError struct {
	Node  string
	Taint []corev1.Taint
	Pods  []string
}

func (e *VictimsError) Error() string {
	var ts []string
	for _, t := range e.Taint {
		ts = append(ts, RenderTaint(t))
	}
	return fmt.Sprintf("node %s: the NoExecute taint %s would delete %d pod(s) without any PodDisruptionBudget check: %s; nothing was relabelled (drain the node of them, then run the same command again)",
		e.Node, strings.Join(ts, ", "), len(e.Pods), strings.Join(e.Pods, ", "))
}

// Blocked marks a VictimsError as blocked by policy.
func (e *VictimsError) Blocked() bool { return true }

// CheckNoExecute is the check before a write that gives node the taints want: the pods on
// the node that do not tolerate a NoExecute taint new in want. An ordinary pod among them
// stops the write (a *VictimsError naming them: the taint manager would delete it without
// any budget check); the DaemonSet and mirror pods the taint will remove are returned, to
// be named.
func CheckNoExecute(ctx context.Context, c kubernetes.Interface, node *corev1.Node, want []corev1.Taint) ([]string, error) {
	added := NewNoExecute(node.Spec.Taints, want)
	if len(added) == 0 {
		return nil, nil
	}
	pods, err := PodsOnNode(ctx, c, node.Name)
	if err != nil {
		return nil, err
	}
	v := NoExecuteVictims(pods, added)
	if len(v.Blocking) > 0 {
		return nil, &VictimsError{Node: node.Name, Taint: added, Pods: v.Blocking}
	}
	return v.Named, nil
}
