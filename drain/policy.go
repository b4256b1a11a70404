package drain

import (
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// OnBlocked is what a drain does with a node whose pods a budget does not let go
// (--on-blocked).
type OnBlocked string

// OnBlocked policies.
const (
	// OnBlockedWait waits for the budgets until --timeout (the default).
	OnBlockedWait OnBlocked = "wait"
	// OnBlockedSkip gives a node up once all its remaining pods have been blocked for
	// BlockedAfter by budgets that did not move: it stays cordoned in noderecord.StateBlocked, the
	// other nodes go on, and the run ends with a SkippedError.
	OnBlockedSkip OnBlocked = "skip"
	// OnBlockedFail stops before anything is cordoned when the plan has a blocker that
	// can never clear; one met later fails its node and stops new nodes from starting.
	OnBlockedFail OnBlocked = "fail"
	// OnBlockedForce deletes (a plain DELETE, not an eviction) each pod that has been
	// blocked by a budget for ForceAfter, by the same blocked clock as skip: the one path
	// of the tool that goes below a budget, never taken without an explicit ForceAfter
	// (force.go).
	OnBlockedForce OnBlocked = "force"
)

// DefaultBlockedAfter is how long a node's remaining pods must all have been blocked, by
// budgets that did not move, before --on-blocked=skip gives it up.
const DefaultBlockedAfter = 5 * time.Minute

// Policy is what a drain does about blocked nodes and deadlines, and who it records as
// having started it. Its zero value is today's behaviour: wait, no deadline.
type Policy struct {
	// OnBlocked is wait (default), skip or fail.
	OnBlocked OnBlocked
	// BlockedAfter is how long a node must have been blocked before skip gives it up.
	// Default DefaultBlockedAfter.
	BlockedAfter time.Duration
	// NotAfter, when set, is the time after which no node starts draining; nodes in
	// progress finish (or reach Timeout). Nodes not started end in a NotStartedError.
	NotAfter time.Time
	// Soak, in a rolling drain (Config.Rolling: drain --pool, a pool move, a rollout), is
	// how long a drained node keeps its slot before the next node starts: time to see that
	// the workloads settled elsewhere. 0: the next starts at once. A node the run leaves
	// with nothing pending after it does not soak.
	Soak time.Duration

	// Dead nodes and force (planned maintenance).
	//
	// ForceAfter, with OnBlocked force (and only with it), is how long a node's pods must
	// have been blocked by budgets whose current status did not move before the blocked
	// pods are deleted. Required with force: there is no default.
	ForceAfter time.Duration
	// NeverForce are budgets ("namespace/name") whose pods are never forced: they wait
	// as under OnBlocked wait.
	NeverForce []string
	// DeadNodeDeleteWait is how long, on a dead node (Ready Unknown or False), a pod whose
	// deletion started still blocks its node: kubectl's --skip-wait-for-delete-timeout for
	// the pods of dead nodes. 0: DefaultDeadNodeDeleteWait; negative: wait for ever.
	DeadNodeDeleteWait time.Duration
}

// fillPolicy fills the policy's defaults.
func (p *Policy) fillPolicy() {
	if p.OnBlocked == "" {
		p.OnBlocked = OnBlockedWait
	}
	if p.BlockedAfter == 0 {
		p.BlockedAfter = DefaultBlockedAfter
	}
}

// BlockedNode is a node a drain gave up (--on-blocked=skip), with the pods it left and
// what blocked each.
type BlockedNode struct {
	Node string `json:"node"`
	// Reason sums it up for a person (the budgets and their numbers).
	Reason string `json:"reason"`
	// Blockers are the pods left on the node.
	Blockers []event.Blocker `json:"pods"`
	// GivenUp: a dry run's node the real run would give up (--on-blocked=skip); never
	// set by a real run (its Skipped nodes are given up).
	GivenUp bool `json:"-"`
}

// SkippedError is a run that gave up nodes under --on-blocked=skip (blocked by policy,
// exit 3); the other nodes were drained.
type SkippedError struct{ Nodes []BlockedNode }

func (e *SkippedError) Error() string {
	var parts []string
	for _, n := range e.Nodes {
		parts = append(parts, fmt.Sprintf("node %s: %s", n.Node, n.Reason))
	}
	return fmt.Sprintf("%d node(s) skipped, blocked (they stay cordoned): %s", len(e.Nodes), strings.Join(parts, "; "))
}

// Blocked marks a SkippedError as blocked by policy.
func (e *SkippedError) Blocked() bool { return true }

// StoppedError is a run stopped by --on-blocked=fail: a blocker that can never clear,
// found by the plan (nothing was cordoned) or met later (no new node started).
type StoppedError struct {
	Blockers []event.Blocker
	// BeforeCordon: found by the plan; nothing was changed.
	BeforeCordon bool
}

func (e *StoppedError) Error() string {
	if e.BeforeCordon {
		return "nothing was changed (--on-blocked=fail): " + describeBlockers(e.Blockers)
	}
	return "stopped (--on-blocked=fail), no new node started: " + describeBlockers(e.Blockers)
}

// Blocked marks a StoppedError as blocked by policy.
func (e *StoppedError) Blocked() bool { return true }

// NotStartedError is a run whose --not-after deadline passed with nodes not started; the
// nodes it had started finished.
type NotStartedError struct {
	NotAfter time.Time
	Nodes    []string
}

func (e *NotStartedError) Error() string {
	return fmt.Sprintf("--not-after %s passed: %d node(s) not started: %s", e.NotAfter.UTC().Format(time.RFC3339), len(e.Nodes), strings.Join(e.Nodes, ", "))
}

// NotStarted marks the error for the exit code mapping.
func (e *NotStartedError) NotStarted() bool { return true }
