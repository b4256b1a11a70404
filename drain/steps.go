package drain

import (
	"context"
	"errors"
	"fmt"
	"net"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// nodeSteps runs the caller's own steps around each node (Config.Steps) and keeps the
// first step's error for the run's result. Its field is guarded by the core's lock.
// Its Locked methods are called with the lock held; they make no API call and send on no
// channel: effects go through core.later, events to the outbox (doc.go).
type nodeSteps struct {
	c        *core
	run      stepsRun
	firstErr error // the first error of a caller's node step
}

// stepsRun is what nodeSteps needs of the run: its nodes, failing one, and how many
// failed of how many planned.
type stepsRun interface {
	nodeLocked(name string) *nodeState
	failNodeLocked(ns *nodeState, msg string)
	failedOfLocked() (failed, planned int)
}

// newNodeSteps runs the caller's steps (c.cfg.Steps) for run.
func newNodeSteps(c *core, run stepsRun) nodeSteps { return nodeSteps{c: c, run: run} }

// NodeSteps are a caller's own steps around each node of a rolling drain (Config.Steps):
// a pool move records the move before the cordon and relabels the node once it is
// drained; a NoExecute rollout taints it. The engine calls them outside its lock, at most
// once at a time per node.
type NodeSteps interface {
	// Before is called once the node is admitted, before its cordon. An error fails the
	// node (one from the API server that asking again may change is retried).
	Before(ctx context.Context, node string) error
	// After is called once the node is drained and its state recorded, before it counts
	// as finished and frees its slot (a moved node is uncordoned then, not at the end of
	// the run). The events it returns follow the node's node.drained. An error from the
	// API server that asking again may change is retried; any other fails the node, and
	// the run's error wraps the first such error.
	After(ctx context.Context, node string) ([]event.Event, error)
}

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
