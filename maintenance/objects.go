package maintenance

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// notFound is a Maintenance named by the user that does not exist: a usage error (the
// one type, drain.UsageError; exit 2 in the commands).
func notFound(name string) error { return drain.Usagef("maintenance %q not found", name) }

// Get returns the named Maintenances in order, or every one when names is empty.
func Get(ctx context.Context, c client.Reader, names []string) (*v1alpha1.MaintenanceList, error) {
	list := &v1alpha1.MaintenanceList{}
	if len(names) == 0 {
		if err := c.List(ctx, list); err != nil {
			return nil, fmt.Errorf("list maintenances: %w", err)
		}
		return list, nil
	}
	for _, n := range names {
		m := &v1alpha1.Maintenance{}
		if err := c.Get(ctx, types.NamespacedName{Name: n}, m); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, notFound(n)
			}
			return nil, fmt.Errorf("get maintenance/%s: %w", n, err)
		}
		list.Items = append(list.Items, *m)
	}
	return list, nil
}

// SetPaused sets spec.paused on the named Maintenances, or with all on every one neither
// finished nor being deleted, calling done after each. A paused object's run starts no
// eviction and no node until it is resumed; the nodes keep their state.
func SetPaused(ctx context.Context, c client.Client, names []string, all, paused bool, done func(name string)) error {
	if all {
		list := &v1alpha1.MaintenanceList{}
		if err := c.List(ctx, list); err != nil {
			return fmt.Errorf("list maintenances: %w", err)
		}
		names = nil
		for _, m := range list.Items {
			if !m.Status.Phase.Done() && m.DeletionTimestamp == nil {
				names = append(names, m.Name)
			}
		}
	}
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"paused":%t}}`, paused))
	for _, name := range names {
		m := &v1alpha1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := c.Patch(ctx, m, patch); err != nil {
			if apierrors.IsNotFound(err) {
				return notFound(name)
			}
			return fmt.Errorf("patch maintenance/%s: %w", name, err)
		}
		done(name)
	}
	return nil
}

// Cancel deletes maintenance/name: the controller stops its run (a finalizer) and the
// nodes keep their state.
func Cancel(ctx context.Context, c client.Client, name string) error {
	m := &v1alpha1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Delete(ctx, m); err != nil {
		if apierrors.IsNotFound(err) {
			return notFound(name)
		}
		return fmt.Errorf("delete maintenance/%s: %w", name, err)
	}
	return nil
}

// Create creates a Maintenance with spec, named name or, when name is "", generated from
// its action ("drain-xxxxx"), recording requestedBy (the user's name, "" when unknown) in
// AnnotationRequestedBy. An object the API server refuses (IsInvalid) is the user's input
// to fix; an API that is not installed says to install it. A refusal by the admission
// policy (the user lacks a right the Maintenance would use) is Forbidden and says which.
func Create(ctx context.Context, c client.Client, name string, spec v1alpha1.MaintenanceSpec, requestedBy string) (*v1alpha1.Maintenance, error) {
	m := &v1alpha1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	if name == "" {
		m.GenerateName = strings.ToLower(string(spec.Action)) + "-"
	}
	if requestedBy != "" {
		m.Annotations = map[string]string{AnnotationRequestedBy: requestedBy}
	}
	if err := c.Create(ctx, m); err != nil {
		switch {
		case apierrors.IsInvalid(err):
			return nil, fmt.Errorf("the API server refused the Maintenance: %w", err)
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			return nil, fmt.Errorf("the Maintenance API is not installed: run `kubectl maintenance install` (%w)", err)
		}
		return nil, fmt.Errorf("create the Maintenance: %w", err)
	}
	return m, nil
}
