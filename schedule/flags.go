package schedule

import (
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

// Flags is a window as a command line gives it: --start and --end (RFC 3339 times or
// durations from now) and --window (a recurring window's text). Read turns them into a
// Window; its errors name the flags, in the words the commands print.
type Flags struct {
	// Start and End are RFC 3339 times or positive durations from now; "" for none.
	Start, End string
	// Window is a recurring window: "Sat 02:00-06:00 Europe/Berlin" (Parse).
	Window string
}

// Read returns the window the flags give at now, nil when they give none.
func (f Flags) Read(now time.Time) (*Window, error) {
	start, err := ParseTime("--start", f.Start, now)
	if err != nil {
		return nil, err
	}
	end, err := ParseTime("--end", f.End, now)
	if err != nil {
		return nil, err
	}
	if !start.IsZero() && !end.IsZero() && !start.Before(end) {
		return nil, fmt.Errorf("invalid --end %s: %s (--start %s)", f.End, MsgEndAfterStart, f.Start)
	}
	if !end.IsZero() && !end.After(now) {
		return nil, fmt.Errorf("invalid --end %s: it has passed", f.End)
	}
	var rec *Recurring
	if f.Window != "" {
		if rec, err = Parse(f.Window); err != nil {
			return nil, fmt.Errorf("invalid --window %w", err)
		}
	}
	if start.IsZero() && end.IsZero() && rec == nil {
		return nil, nil
	}
	return &Window{NotBefore: start, NotAfter: end, Recurring: rec}, nil
}

// ParseTime reads a time flag: an RFC 3339 time or a positive duration from now ("" is
// none, the zero time).
func ParseTime(flag, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid %s %q: want an RFC 3339 time (2026-12-05T02:00:00Z) or a duration from now (90m)", flag, s)
	}
	if d <= 0 {
		return time.Time{}, fmt.Errorf("invalid %s %q: a duration must be positive", flag, s)
	}
	return now.Add(d), nil
}

// WaitForStart is a local run's wait for its --start: until start, saying until when on
// out (nothing when start is zero or not after now). A ctx that ends first ends the wait
// with an error that says nothing was changed, written to out too (the caller prints
// no error for an interruption).
func WaitForStart(ctx context.Context, out io.Writer, start, now time.Time) error {
	if start.IsZero() || !start.After(now) {
		return nil
	}
	d := start.Sub(now)
	fmt.Fprintf(out, "waiting until %s (in %s) to start (--start); Ctrl-C stops the wait with nothing changed\n",
		start.UTC().Format(time.RFC3339), duration.HumanDuration(d))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		err := fmt.Errorf("interrupted while waiting for --start %s: nothing was changed", start.UTC().Format(time.RFC3339))
		fmt.Fprintln(out, err)
		return err
	case <-t.C:
		return nil
	}
}
