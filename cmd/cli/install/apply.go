package install

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Verbs of a Result, as kubectl prints them.
const (
	Created        = "created"
	Configured     = "configured"
	Unchanged      = "unchanged"
	Deleted        = "deleted"
	AlreadyDeleted = "already deleted"
)

// Result is what Apply or Uninstall did to one object.
type Result struct {
	// Ref names the object as kubectl prints it (Ref).
	Ref string
	// Verb is Created, Configured or Unchanged (Apply), Deleted or AlreadyDeleted
	// (Uninstall).
	Verb string
	// Object is the object as the API server returned it from the apply (nil from
	// Uninstall).
	Object *unstructured.Unstructured
}

// establishTimeout bounds the wait for an applied CRD to be served.
const establishTimeout = 30 * time.Second

// Apply server-side applies objs in order (field manager FieldManager, conflicts
// forced: these objects are this tool's), waits after each CRD until it is Established,
// and returns what it did to each: created when the object did not exist, unchanged when
// its resourceVersion stayed the same (the API server writes nothing for an apply that
// changes nothing), configured otherwise. It stops at the first error, returning the
// results before it.
func Apply(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) ([]Result, error) {
	var done []Result
	for _, o := range objs {
		r, err := apply(ctx, c, o)
		if err != nil {
			return done, err
		}
		done = append(done, r)
	}
	return done, nil
}

func apply(ctx context.Context, c client.Client, want *unstructured.Unstructured) (Result, error) {
	ref := Ref(want)
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(want.GroupVersionKind())
	before := ""
	switch err := c.Get(ctx, client.ObjectKeyFromObject(want), cur); {
	case err == nil:
		before = cur.GetResourceVersion()
	case !apierrors.IsNotFound(err):
		return Result{}, fmt.Errorf("get %s: %w", ref, err)
	}
	if before != "" {
		// An apply that would change nothing is not sent: the API server may still write
		// one (a ValidatingAdmissionPolicy whose status another manager applies has its
		// managedFields reordered, and a new resourceVersion, on every apply).
		dry := want.DeepCopy()
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(dry), client.FieldOwner(FieldManager), client.ForceOwnership, client.DryRunAll); err != nil {
			return Result{}, fmt.Errorf("apply %s (dry run): %w", ref, err)
		}
		if sameContent(cur, dry) {
			return Result{Ref: ref, Verb: Unchanged, Object: cur}, nil
		}
	}
	got := want.DeepCopy()
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(got), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return Result{}, fmt.Errorf("apply %s: %w", ref, err)
	}
	r := Result{Ref: ref, Verb: Configured, Object: got}
	switch before {
	case "":
		r.Verb = Created
	case got.GetResourceVersion():
		r.Verb = Unchanged
	}
	if got.GetKind() == "CustomResourceDefinition" {
		if err := waitEstablished(ctx, c, got); err != nil {
			return Result{}, fmt.Errorf("wait for %s to be established: %w", ref, err)
		}
	}
	return r, nil
}

// waitEstablished polls the CRD every 100 ms until its Established condition is True.
// controller-runtime's plain client has no watch.
func waitEstablished(ctx context.Context, c client.Client, crd *unstructured.Unstructured) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, establishTimeout, true, func(ctx context.Context) (bool, error) {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(crd.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(crd), got); err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, cond := range conds {
			if m, ok := cond.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
}

// sameContent reports whether a and b are the same object but for the bookkeeping an
// apply writes (resourceVersion, managedFields).
func sameContent(a, b *unstructured.Unstructured) bool {
	strip := func(o *unstructured.Unstructured) map[string]any {
		c := o.DeepCopy()
		unstructured.RemoveNestedField(c.Object, "metadata", "resourceVersion")
		unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
		return c.Object
	}
	return equality.Semantic.DeepEqual(strip(a), strip(b))
}
