package drain

import (
	"context"
	"errors"
	"fmt"
	"net"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// newNodeSteps runs the caller's steps (c.cfg.Steps) for run.
func newNodeSteps(c *core, run stepsRun) nodeSteps { return nodeSteps{c: c, run: run} }

// stepTransient reports a step's error worth trying again: the API server's answer that
// asking again may change, or the network; never the step's own verdict.
func stepTransient(err error) bool {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return transient(err)
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// before runs the caller's Before step for an admitted node; false when it failed (the
// node is failed) or ctx ended.
func (st *nodeSteps) before(ctx context.Context, node string) bool {
	s := st.c.cfg.Steps
	if s == nil {
		return true
	}
	var err error
	for {
		if err = s.Before(ctx, node); err == nil || !stepTransient(err) || ctx.Err() != nil {
			break
		}
		select {
		case <-st.c.cfg.Clock.After(retryDelay):
		case <-ctx.Done():
		}
	}
	if err == nil {
		return true
	}
	if ctx.Err() == nil {
		st.c.lock()
		st.failedLocked(st.run.nodeLocked(node), err)
		st.c.unlock()
	}
	return false
}

// failedLocked fails the node on a step's error, keeping the first for the run's
// result.
func (st *nodeSteps) failedLocked(ns *nodeState, err error) {
	if st.firstErr == nil {
		st.firstErr = err
	}
	st.run.failNodeLocked(ns, err.Error())
}

// resultLocked is the run's error when nodes failed: it wraps the first step's
// error, so that its kind (blocked by policy, ...) reaches the caller.
func (st *nodeSteps) resultLocked() error {
	failed, planned := st.run.failedOfLocked()
	if st.firstErr == nil {
		return fmt.Errorf("%d of %d nodes failed to drain", failed, planned)
	}
	return fmt.Errorf("%d of %d nodes failed: %w", failed, planned, st.firstErr)
}
