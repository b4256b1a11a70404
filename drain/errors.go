package drain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// The errors a drain returns: usage errors (exit 2), a preflight that refuses, a pod
// refused for good, a timeout, an interrupt and a pause.

// ConfigError is an invalid configuration (a usage error).
type ConfigError = UsageError

// UsageError is input to fix: a setting, a node name, a request that cannot be carried out
// as given (nothing was changed). It is the one usage-error type of the engines and the
// operations layer (operation.UsageError and nodepool.UsageError are this type); the
// commands exit 2 for it.
type UsageError struct {
	msg string
	// Mistakes are the invalid settings, one each, when the error is Settings.Validate's
	// (a front end may say them in its own names: the CLI names its flags).
	Mistakes []Mistake
}

func (e *UsageError) Error() string { return e.msg }

// Usage marks a UsageError as the user's input to fix.
func (e *UsageError) Usage() bool { return true }

// Usagef builds a UsageError.
func Usagef(format string, args ...any) error { return &UsageError{msg: fmt.Sprintf(format, args...)} }

// NodeNotFoundError is a node name that does not exist (a usage error).
type NodeNotFoundError struct{ Name string }

func (e *NodeNotFoundError) Error() string { return fmt.Sprintf("node %q not found", e.Name) }

// Usage marks NodeNotFoundError as the user's input to fix.
func (e *NodeNotFoundError) Usage() bool { return true }

// PreflightError means some node can't be drained with the flags given (DaemonSet pods
// without --ignore-daemonsets, pods with local storage without --delete-emptydir-data,
// pods with no controller without --force). Nothing was changed.
type PreflightError struct{ Problems []string }

func (e *PreflightError) Error() string {
	return "nothing was changed: " + strings.Join(e.Problems, "; ")
}

// Blocked marks a PreflightError as blocked by policy.
func (e *PreflightError) Blocked() bool { return true }

// PodFailedError is an eviction the API server refused for good (RBAC, an admission
// webhook, an invalid request): waiting does not help.
type PodFailedError struct {
	Pod    string
	Reason string
}

func (e *PodFailedError) Error() string {
	return fmt.Sprintf("cannot evict pod %s: %s", e.Pod, e.Reason)
}

// TimeoutError is a drain that reached its timeout with pods still waiting.
type TimeoutError struct {
	Timeout  time.Duration
	Blockers []event.Blocker
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("drain timed out after %s; still waiting: %s", e.Timeout, describeBlockers(e.Blockers))
}

// Unwrap lets errors.Is(err, context.DeadlineExceeded) hold.
func (e *TimeoutError) Unwrap() error { return errDeadline }

// ErrPaused is the cause (context.WithCancelCause) with which a run's context is
// cancelled to pause it: the nodes it holds stay as they are (draining, its record and
// heartbeat), for the caller to keep holding (noderecord.RenewHeartbeat) until a run
// under the same identity resumes them. Any other end of the context lets them go
// (noderecord.StateFailed).
var ErrPaused = errors.New("paused")

// InterruptedError is a drain stopped by its context (Ctrl-C). The nodes keep their
// state annotations; running the same command again finishes the job.
type InterruptedError struct{ Blockers []event.Blocker }

func (e *InterruptedError) Error() string {
	if len(e.Blockers) == 0 {
		return "drain interrupted; run the same command again to finish"
	}
	return fmt.Sprintf("drain interrupted with pods still waiting (%s); run the same command again to finish", describeBlockers(e.Blockers))
}

// Unwrap lets errors.Is(err, context.Canceled) hold.
func (e *InterruptedError) Unwrap() error { return errCanceled }

func describeBlockers(bs []event.Blocker) string {
	if len(bs) == 0 {
		return "nothing"
	}
	var parts []string
	for i, b := range bs {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(bs)-5))
			break
		}
		if b.Pod == "" { // a node another run holds
			parts = append(parts, b.Message)
			continue
		}
		parts = append(parts, fmt.Sprintf("pod %s on %s: %s", b.Pod, b.Node, b.Message))
	}
	return strings.Join(parts, "; ")
}

var (
	errDeadline = context.DeadlineExceeded
	errCanceled = context.Canceled
)

// IsUsage reports whether err is the user's input to fix.
func IsUsage(err error) bool {
	var u interface{ Usage() bool }
	return errors.As(err, &u) && u.Usage()
}

// Mistake is one invalid setting. Setting is the setting's name as the Maintenance spec
// writes it ("gracePeriodSeconds"); Rule the fixed words the API server's CEL rule of
// the same setting says after that name ("must be -1 (each pod's own) or more"); Value
// the value given ("" for a rule between two settings). A front end may name its own
// flag instead of Setting, but says the same Rule.
type Mistake struct {
	Setting, Rule, Value string
}

// String is the mistake in the settings' words: "gracePeriodSeconds must be -1 (each
// pod's own) or more, got -2", the CEL rule's message followed by the value.
func (m Mistake) String() string {
	if m.Value == "" {
		return m.Setting + " " + m.Rule
	}
	return m.Setting + " " + m.Rule + ", got " + m.Value
}
