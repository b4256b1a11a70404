package drain

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// retryDelay is the wait before a node step that failed for a transient reason (the API
// server away, a timeout) is tried again.
const retryDelay = 2 * time.Second

// transient reports an error worth trying again: anything but a refusal that asking
// again cannot change.
func transient(err error) bool {
	return asHeld(err) == nil && !apierrors.IsForbidden(err) && !apierrors.IsNotFound(err) && !apierrors.IsInvalid(err) &&
		!apierrors.IsBadRequest(err) && !apierrors.IsUnauthorized(err) && !apierrors.IsMethodNotSupported(err)
}

// retryTransient calls f until it succeeds, fails for good, or ctx ends.
func (c *core) retryTransient(ctx context.Context, f func() error) error {
	for {
		err := f()
		if err == nil || !transient(err) || ctx.Err() != nil {
			return err
		}
		c.cfg.Logger.V(2).Info("retrying", "err", err)
		select {
		case <-c.cfg.Clock.After(retryDelay):
		case <-ctx.Done():
			return err
		}
	}
}

// trimPod drops what the engine never reads from cached pods.
func trimPod(obj any) (any, error) {
	if p, ok := obj.(*corev1.Pod); ok {
		p.ManagedFields = nil
		p.Spec.Containers = nil
		p.Spec.InitContainers = nil
		p.Spec.Volumes = nil
		p.Status.ContainerStatuses = nil
		p.Status.InitContainerStatuses = nil
	}
	return obj, nil
}

// asHeld returns the HeldError in err, if any.
func asHeld(err error) *noderecord.HeldError {
	var held *noderecord.HeldError
	if errors.As(err, &held) {
		return held
	}
	return nil
}
