package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/access"
)

// The permission preflight: each command that changes nodes first asks the API server
// (SelfSubjectAccessReviews) whether the user may make every call it will make, and stops
// on the first one denied with one line, `error: cannot create pods/eviction in namespace
// "shop" (user "jane")`, exit 1, before anything is printed or changed. Creating Events is
// not checked: the engine records them on a best-effort basis.

// preflight checks drain's permissions for names: reading nodes, pods and budgets, patching
// nodes, and evicting in every namespace holding a pod the drain may evict. A client dry run
// checks only the reads.
func (o *DrainOptions) preflight(ctx context.Context, cs kubernetes.Interface, names []string) error {
	return o.preflightWith(ctx, cs, names, access.Drain)
}

// preflight checks a pool move's permissions: a drain's, and reading NodePools.
func (o *PoolMoveOptions) preflight(ctx context.Context, cs kubernetes.Interface, names []string) error {
	return o.preflightWith(ctx, cs, names, access.PoolMove)
}

// preflight checks cordon's and uncordon's permissions: get and patch nodes (only get for
// a client dry run).
func (o *CordonOptions) preflight(ctx context.Context, cs kubernetes.Interface) error {
	return o.checkAccess(ctx, cs, o.DryRun, access.Cordon())
}

// preflightWith runs checks(nil) first (nodes, pods, budgets: what is needed to even look
// at the pods), then the evictions: in every namespace at once, else in the namespaces of
// the pods on the nodes.
func (o *DrainOptions) preflightWith(ctx context.Context, cs kubernetes.Interface, names []string, checks func([]string) []access.Check) error {
	if err := o.checkAccess(ctx, cs, o.DryRun, checks(nil)); err != nil {
		return err
	}
	if o.DryRun == "client" {
		return nil
	}
	// Allowed in every namespace (the common case of a ClusterRole): no need to look at the
	// pods. Otherwise ask for each namespace that holds a pod the drain may evict.
	err := o.checkAccess(ctx, cs, o.DryRun, access.EvictionsEverywhere())
	var denied *access.Denied
	if !errors.As(err, &denied) {
		return err
	}
	namespaces, err := evictionNamespaces(ctx, cs, names, o.PodSelector)
	if err != nil {
		return err
	}
	return o.checkAccess(ctx, cs, o.DryRun, access.Evictions(namespaces))
}

// checkAccess asks about checks (only the reads for a client dry run). When the API server
// cannot answer reviews at all (SelfSubjectAccessReview forbidden or not served), the
// preflight is skipped and the real calls will say what is missing.
func (c *Common) checkAccess(ctx context.Context, cs kubernetes.Interface, dryRun string, checks []access.Check) error {
	if dryRun == "client" {
		checks = access.ReadOnly(checks)
	}
	fallback := ""
	if cfg, err := c.RESTConfig(); err == nil {
		fallback = access.UserFromConfig(cfg)
	}
	err := (&access.Checker{Client: cs, FallbackUser: fallback}).Check(ctx, checks)
	var denied *access.Denied
	switch {
	case err == nil || errors.As(err, &denied):
		return err
	case apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err):
		klog.FromContext(ctx).V(2).Info("permission preflight skipped: the API server does not answer SelfSubjectAccessReviews", "err", err)
		return nil
	}
	return err
}

// evictionNamespaces lists the namespaces of the pods on the nodes that a drain may evict:
// not mirror pods, not DaemonSet pods (never evicted), only those the pod selector matches.
func evictionNamespaces(ctx context.Context, cs kubernetes.Interface, nodes []string, podSelector string) ([]string, error) {
	sel := labels.Everything()
	if podSelector != "" {
		if s, err := labels.Parse(podSelector); err == nil {
			sel = s
		}
	}
	seen := map[string]bool{}
	for _, n := range nodes {
		list, err := cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + n})
		if err != nil {
			return nil, fmt.Errorf("list pods on node %s: %w", n, err)
		}
		for i := range list.Items {
			if p := &list.Items[i]; mayEvict(p, sel) {
				seen[p.Namespace] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for ns := range seen {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out, nil
}

func mayEvict(p *corev1.Pod, sel labels.Selector) bool {
	if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror || !sel.Matches(labels.Set(p.Labels)) {
		return false
	}
	if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "DaemonSet" {
		return false
	}
	return true
}
