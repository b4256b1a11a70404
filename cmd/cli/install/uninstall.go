package install

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	poolv1 "github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// DefaultCRDTimeout bounds how long Uninstall waits for the CRDs (and with them every
// Maintenance and NodePool) to be gone.
const DefaultCRDTimeout = 2 * time.Minute

// UninstallOptions says how Uninstall goes.
type UninstallOptions struct {
	// Force uninstalls even while a Maintenance runs or a NodePool exists (InUseError).
	Force bool
	// CRDTimeout bounds the wait for the CRDs to be gone; 0 means DefaultCRDTimeout.
	CRDTimeout time.Duration
}

// InUseError is Uninstall's refusal: deleting the CRDs would delete these objects.
// Maintenances that are done (Succeeded, Failed, ...) are records and do not refuse.
type InUseError struct {
	// Active names each Maintenance not done, with its phase: "maintenance/m1 (Running)".
	Active []string
	// Pools names each NodePool: "nodepool/blue".
	Pools []string
}

// maxNamed is how many objects InUseError's one line names before "and N more".
const maxNamed = 5

// Error names the objects on one line, at most maxNamed of them.
func (e *InUseError) Error() string {
	all := append(slices.Clone(e.Active), e.Pools...)
	named := all
	if len(all) > maxNamed {
		named = append(slices.Clone(all[:maxNamed]), fmt.Sprintf("and %d more", len(all)-maxNamed))
	}
	return fmt.Sprintf("refusing to uninstall: deleting the CRDs would delete %s", strings.Join(named, ", "))
}

// Blocked reports a refusal by policy (exit 3).
func (e *InUseError) Blocked() bool { return true }

// Uninstall deletes objs (as Objects returns them, with the same Options) in the reverse
// of their apply order, so the controller's Deployment goes before its RBAC and the CRDs
// go last, and waits until the CRDs are gone. Deleting a CRD deletes its objects: while
// a Maintenance is not done or a NodePool exists, Uninstall deletes nothing and returns
// an *InUseError, unless opts.Force. Once a CRD is being deleted, its objects are being
// deleted too, and Uninstall takes their finalizers off (the controller is gone, so no
// one else would): a Maintenance's nodes and a NodePool's labels and taints stay as they
// are. An object already gone is reported AlreadyDeleted.
func Uninstall(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, opts UninstallOptions) ([]Result, error) {
	if !opts.Force {
		if err := InUse(ctx, c); err != nil {
			return nil, err
		}
	}
	order := slices.Clone(objs)
	slices.Reverse(order)
	// The CRDs last whatever the order of the rest.
	slices.SortStableFunc(order, func(a, b *unstructured.Unstructured) int {
		return boolInt(isCRD(a)) - boolInt(isCRD(b))
	})
	var done []Result
	var crds []*unstructured.Unstructured
	for _, o := range order {
		r := Result{Ref: Ref(o), Verb: Deleted}
		err := c.Delete(ctx, o.DeepCopy(), client.PropagationPolicy(metav1.DeletePropagationBackground))
		switch {
		case apierrors.IsNotFound(err):
			r.Verb = AlreadyDeleted
		case err != nil:
			return done, fmt.Errorf("delete %s: %w", r.Ref, err)
		case isCRD(o):
			crds = append(crds, o)
		}
		done = append(done, r)
	}
	timeout := opts.CRDTimeout
	if timeout == 0 {
		timeout = DefaultCRDTimeout
	}
	for _, crd := range crds {
		if err := waitCRDGone(ctx, c, crd, timeout); err != nil {
			return done, fmt.Errorf("wait for %s to be deleted: %w", Ref(crd), err)
		}
	}
	return done, nil
}

// InUse returns an *InUseError naming every Maintenance not done and every NodePool,
// nil when there is none or the CRDs are not installed.
func InUse(ctx context.Context, c client.Client) error {
	e := &InUseError{}
	ms, err := list(ctx, c, mntv1.GroupVersion.WithKind("Maintenance"))
	if err != nil {
		return err
	}
	for _, m := range ms {
		phase, _, _ := unstructured.NestedString(m.Object, "status", "phase")
		if mntv1.Phase(phase).Done() {
			continue
		}
		if phase == "" {
			phase = string(mntv1.PhasePending)
		}
		e.Active = append(e.Active, fmt.Sprintf("maintenance/%s (%s)", m.GetName(), phase))
	}
	pools, err := list(ctx, c, poolv1.GroupVersion.WithKind("NodePool"))
	if err != nil {
		return err
	}
	for _, p := range pools {
		e.Pools = append(e.Pools, "nodepool/"+p.GetName())
	}
	if len(e.Active)+len(e.Pools) == 0 {
		return nil
	}
	return e
}

// list lists every object of gvk; a kind the API server does not serve has none.
func list(ctx context.Context, c client.Client, gvk schema.GroupVersionKind) ([]unstructured.Unstructured, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	err := c.List(ctx, l)
	switch {
	case meta.IsNoMatchError(err), apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("list %ss: %w", strings.ToLower(gvk.Kind), err)
	}
	return l.Items, nil
}

// waitCRDGone polls every 200 ms until crd is gone, taking the finalizers off its
// objects that are being deleted (the CRD's deletion deletes them; a finalizer nobody
// removes would keep the CRD forever).
func waitCRDGone(ctx context.Context, c client.Client, crd *unstructured.Unstructured, timeout time.Duration) error {
	kind, _ := servedKind(crd)
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(crd.GroupVersionKind())
		switch err := c.Get(ctx, client.ObjectKeyFromObject(crd), got); {
		case apierrors.IsNotFound(err):
			return true, nil
		case err != nil:
			return false, nil // a transient error: look again
		}
		if kind.Empty() {
			return false, nil
		}
		items, err := list(ctx, c, kind)
		if err != nil {
			return false, nil
		}
		for _, it := range items {
			if it.GetDeletionTimestamp() == nil || len(it.GetFinalizers()) == 0 {
				continue
			}
			patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
			if err := c.Patch(ctx, &it, patch); err != nil && !apierrors.IsNotFound(err) {
				return false, fmt.Errorf("remove the finalizers of %s/%s: %w", strings.ToLower(kind.Kind), it.GetName(), err)
			}
		}
		return false, nil
	})
}

// servedKind is the kind (at its storage version) of the objects crd defines.
func servedKind(crd *unstructured.Unstructured) (schema.GroupVersionKind, bool) {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if m["storage"] == true {
			return schema.GroupVersionKind{Group: group, Version: str(m["name"]), Kind: kind}, true
		}
	}
	return schema.GroupVersionKind{}, false
}

func isCRD(o *unstructured.Unstructured) bool { return o.GetKind() == "CustomResourceDefinition" }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
