package operation

import (
	"context"
	"errors"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-maintenance/kubectl-maintenance/access"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/predicate"
)

// The permission preflight: before an action changes anything, the layer asks the API
// server (SelfSubjectAccessReviews) whether the user may make every call the action will
// make, derived from the request, and stops on the first one denied with an
// *access.Denied that renders as one line, `cannot create pods/eviction in namespace
// "shop" (user "jane")`. --surge's scales are asked once the drain's plan knows which
// Deployments it will scale (the engine's Permit). Creating Events is not checked: the
// engine records them on a best-effort basis.

// preflight checks req's permissions on names: get and patch nodes for a cordon or an
// uncordon; for a drain, a move or a rollout, reading nodes, pods and budgets (and
// NodePools for a move or a rollout, whose status a rollout writes), patching nodes and evicting in every namespace holding a pod the drain may
// evict. A client dry run checks only the reads.
func (o *Operator) preflight(ctx context.Context, req Request, names []string) error {
	switch req.Action {
	case Cordon, Uncordon:
		return o.checkAccess(ctx, req.Drain.DryRun, access.Cordon())
	case Drain:
		return o.preflightDrain(ctx, req, names, access.Drain)
	case Move:
		return o.preflightDrain(ctx, req, names, access.PoolMove)
	case Rollout:
		return o.preflightDrain(ctx, req, names, access.Rollout)
	}
	return nil
}

// preflightDrain runs checks(nil) first (nodes, pods, budgets: what is needed to even
// look at the pods), then the evictions: in every namespace at once, else in the
// namespaces of the pods on the nodes.
func (o *Operator) preflightDrain(ctx context.Context, req Request, names []string, checks func([]string) []access.Check) error {
	if err := o.checkAccess(ctx, req.Drain.DryRun, checks(nil)); err != nil {
		return err
	}
	if req.Drain.WaitForVolumeDetach && (req.Drain.DryRun == "" || req.Drain.DryRun == drain.DryRunNone) {
		if err := o.checkAccess(ctx, req.Drain.DryRun, access.VolumeDetach()); err != nil {
			return err
		}
	}
	if req.Drain.DryRun == drain.DryRunClient {
		return nil
	}
	if err := o.preflightForce(ctx, req, names); err != nil { // --on-blocked=force (preflight_optin.go)
		return err
	}
	if err := o.preflightClearHolds(ctx, req, names); err != nil { // --clear-disruption-holds
		return err
	}
	// Allowed in every namespace (the common case of a ClusterRole): no need to look at
	// the pods. Otherwise ask for each namespace that holds a pod the drain may evict.
	err := o.checkAccess(ctx, req.Drain.DryRun, access.EvictionsEverywhere())
	var denied *access.Denied
	if !errors.As(err, &denied) {
		return err
	}
	namespaces, err := o.evictionNamespaces(ctx, names, req.Drain.PodSelector)
	if err != nil {
		return err
	}
	return o.checkAccess(ctx, req.Drain.DryRun, access.Evictions(namespaces))
}

// surgePermit is the engine's Permit for --surge: once the plan knows which Deployments
// it will scale, the user's permission to scale them is checked before anything changes.
func (o *Operator) surgePermit(dryRun drain.DryRun) func(context.Context, drain.Permits) error {
	return func(ctx context.Context, p drain.Permits) error {
		return o.checkAccess(ctx, dryRun, access.Surge(p.SurgeNamespaces))
	}
}

// checkAccess asks about checks (only the reads for a client dry run). When the API
// server cannot answer reviews at all (SelfSubjectAccessReview forbidden or not served),
// the preflight is skipped and the real calls will say what is missing.
func (o *Operator) checkAccess(ctx context.Context, dryRun drain.DryRun, checks []access.Check) error {
	if dryRun == drain.DryRunClient {
		checks = access.ReadOnly(checks)
	}
	err := (&access.Checker{Client: o.Kube, FallbackUser: o.User}).Check(ctx, checks)
	var denied *access.Denied
	switch {
	case err == nil || errors.As(err, &denied):
		return err
	case apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err):
		o.logger().V(2).Info("permission preflight skipped: the API server does not answer SelfSubjectAccessReviews", "err", err)
		return nil
	}
	return err
}

// evictionNamespaces lists the namespaces of the pods on the nodes that a drain may
// evict: not mirror pods, not DaemonSet pods (never evicted), only those the pod
// selector matches.
func (o *Operator) evictionNamespaces(ctx context.Context, nodes []string, podSelector string) ([]string, error) {
	sel := labels.Everything()
	if podSelector != "" {
		if s, err := labels.Parse(podSelector); err == nil {
			sel = s
		}
	}
	seen := map[string]bool{}
	for _, n := range nodes {
		list, err := o.Kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + n})
		if err != nil {
			return nil, fmt.Errorf("list pods on node %s: %w", n, err)
		}
		for i := range list.Items {
			p := &list.Items[i]
			if !predicate.MirrorOrDaemonSetPod(p) && sel.Matches(labels.Set(p.Labels)) {
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
