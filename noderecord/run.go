package noderecord

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// How a run's hold on its nodes lives and ends. A run renews AnnotationHeartbeat on every
// node it holds once the heartbeat is HeartbeatInterval old; another run takes a holder
// whose heartbeat is HeartbeatExpiry old or more for dead (a run killed with kill -9 says
// nothing), and takes the node over. The holder looks for heartbeats to renew every fifth
// of the interval, several at once, so a renewal that fails (an API server restart, a slow
// write) is tried again 5 s later, seven times before a live run is taken for dead. At 25
// s the writes of a large drain stay small: one patch per node held every 25 to 30 s,
// about 36 a second for 1,000 cordoned nodes, against the 100 a second kubelets' node
// leases cost at 10 s. A holder on this host whose process is gone is dead at once (a
// plain re-run after kill -9 does not wait).
const (
	HeartbeatInterval = 25 * time.Second
	HeartbeatExpiry   = 60 * time.Second
)

// MaintenanceCommandPrefix starts the Command of a run made by the in-cluster controller
// for a Maintenance: "maintenance/<name>".
const MaintenanceCommandPrefix = "maintenance/"

// Run is the identity of one run of this tool (a CLI command, a dashboard action, a
// controller's work on a Maintenance), recorded on every node it holds.
type Run struct {
	// ID is unique per run (NewRun makes one).
	ID string `json:"id"`
	// Host and PID are where the run's process runs, so that a run on the same host can
	// tell a holder killed with kill -9 at once.
	Host string `json:"host,omitempty"`
	PID  int    `json:"pid,omitempty"`
	// Command is the command line (without credentials: the caller builds it), or
	// "maintenance/<name>" for the controller. Recorded in AnnotationCommand.
	Command string `json:"-"`
	// User is the user the run acts as ("" when unknown). Recorded in AnnotationUser.
	User string `json:"-"`
}

// NewRun returns a Run of this process with a fresh ID, for the command and user given.
func NewRun(command, user string) Run {
	r := Run{Command: command, User: user}
	return r.WithID()
}

// ForMaintenance is the Run of the in-cluster controller working on Maintenance name.
func ForMaintenance(name, user string) Run {
	return NewRun(MaintenanceCommandPrefix+name, user)
}

// Maintenance returns the name of the Maintenance whose run r is (its Command is
// "maintenance/<name>" with a non-empty name), and false for any other run: a CLI
// command, a dashboard action, or no run at all.
func (r Run) Maintenance() (name string, ok bool) {
	name, ok = strings.CutPrefix(r.Command, MaintenanceCommandPrefix)
	if !ok || name == "" {
		return "", false
	}
	return name, true
}

// WithID returns r with an ID (a fresh one when it has none) and this process's host and
// PID when r names none.
func (r Run) WithID() Run {
	if r.ID == "" {
		var b [6]byte
		if _, err := rand.Read(b[:]); err == nil {
			r.ID = hex.EncodeToString(b[:])
		} else {
			r.ID = fmt.Sprintf("%x", time.Now().UnixNano())
		}
	}
	if r.Host == "" {
		r.Host, _ = os.Hostname()
		r.PID = os.Getpid()
	}
	return r
}

// String names the run for a person: its ID, user and command.
func (r Run) String() string {
	parts := []string{"run " + r.ID}
	if r.User != "" {
		parts = append(parts, "by "+r.User)
	}
	if r.Command != "" {
		cmd := r.Command
		if len(cmd) > 80 { // the middle goes: the verb's nodes and flags are at the end
			cmd = cmd[:30] + "..." + cmd[len(cmd)-47:]
		}
		parts = append(parts, fmt.Sprintf("(%s)", cmd))
	}
	return strings.Join(parts, " ")
}

func (r Run) encode() string {
	b, _ := json.Marshal(r)
	return string(b)
}

func parseRun(v string) Run {
	var r Run
	if v == "" || json.Unmarshal([]byte(v), &r) != nil {
		return Run{}
	}
	return r
}

// Liveness decides whether a recorded run still lives. Its zero value uses the heartbeat
// alone.
type Liveness struct {
	// Expiry is how old a heartbeat may be (default HeartbeatExpiry).
	Expiry time.Duration
	// ProcessGone, when set, reports a run whose process is known to be gone (default:
	// one on this host whose PID no longer runs).
	ProcessGone func(Run) bool
}

// DefaultLiveness is the heartbeat with the check of this host's processes.
var DefaultLiveness = Liveness{Expiry: HeartbeatExpiry, ProcessGone: goneOnThisHost}

// Live reports whether the run recorded on the node still holds it at now: it has a
// heartbeat younger than the expiry and its process is not known to be gone.
func (l Liveness) Live(rec Record, now time.Time) bool {
	if rec.Run.ID == "" || rec.Heartbeat.IsZero() {
		return false
	}
	exp := l.Expiry
	if exp <= 0 {
		exp = HeartbeatExpiry
	}
	if now.Sub(rec.Heartbeat) >= exp {
		return false
	}
	return l.ProcessGone == nil || !l.ProcessGone(rec.Run)
}

// HeldBy returns the live run other than self (a run ID) that holds the node, if any.
func (l Liveness) HeldBy(rec Record, self string, now time.Time) (Run, bool) {
	if rec.Run.ID == "" || rec.Run.ID == self || !l.Live(rec, now) {
		return Run{}, false
	}
	return rec.Run, true
}

// goneOnThisHost reports a run of another process on this host that no longer runs.
func goneOnThisHost(r Run) bool {
	host, err := os.Hostname()
	if err != nil || r.Host == "" || r.Host != host || r.PID <= 0 || r.PID == os.Getpid() {
		return false
	}
	return !processAlive(r.PID)
}

// HeldError is a node another live run holds: this run leaves it alone.
type HeldError struct {
	Node      string
	Holder    Run
	Heartbeat time.Time
	Since     time.Time
}

func (e *HeldError) Error() string {
	msg := fmt.Sprintf("node %s is held by %s", e.Node, e.Holder)
	if _, isMaintenance := e.Holder.Maintenance(); e.Holder.Host != "" && !isMaintenance {
		msg += fmt.Sprintf(" on %s (pid %d)", e.Holder.Host, e.Holder.PID)
	}
	if !e.Since.IsZero() {
		msg += fmt.Sprintf(", since %s", e.Since.UTC().Format(time.RFC3339))
	}
	return msg
}
