package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/schedule"
)

// Windows (planned maintenance).

// WindowFlags are drain's window flags: --start, --end and --window (a recurring window).
// With --server-side they become the Maintenance's spec.window (and --on-window-close its
// policy.onWindowClose); a local drain waits for --start and takes --end as --not-after
// (it does not take --window: a recurring window needs the controller).
type WindowFlags struct {
	// Start and End are RFC 3339 times or durations from now; "" for none.
	Start, End string
	// Window is a recurring window: "Sat 02:00-06:00 Europe/Berlin".
	Window string
	// OnWindowClose is Finish or Stop (server-side only).
	OnWindowClose string

	start, end time.Time
	recurring  *schedule.Recurring
	// local: the flags are for a run in this process (no --server-side).
	local bool
	// planOnly: the command only shows the plan (plan): every form is shown, none run.
	planOnly bool
}

// addWindowFlags adds --start, --end and --window (and, with serverSide, --on-window-close).
func (w *WindowFlags) addWindowFlags(cmd *cobra.Command, serverSide bool) {
	f := cmd.Flags()
	f.StringVar(&w.Start, "start", "", "no node starts before this time (RFC 3339, e.g. 2026-12-05T02:00:00Z, or a duration from now, e.g. 2h); a local drain waits until then, changing nothing; with --server-side the Maintenance is Scheduled and its nodes carry MaintenancePlanned=True")
	f.StringVar(&w.End, "end", "", "no node starts after this time (RFC 3339 or a duration from now); for a local drain the same as --not-after")
	f.StringVar(&w.Window, "window", "", "with --server-side (or plan): a recurring window, DAYS START-END [ZONE], e.g. 'Sat 02:00-06:00 Europe/Berlin' or 'Sat,Sun 02:00-06:00 UTC' (times HH:MM or HH:MM:SS; an end before the start closes the next day)")
	if serverSide {
		f.StringVar(&w.OnWindowClose, "on-window-close", "", `with --server-side and a window: what nodes in progress do when it closes: "Finish" (the default: they finish) or "Stop" (they stop, cordoned with their state; a recurring window goes on from there)`)
		_ = cmd.RegisterFlagCompletionFunc("on-window-close", fixedChoices("Finish", "Stop"))
	}
}

// validateWindow checks the window flags at now; local is true for a run in this process.
func (w *WindowFlags) validateWindow(now time.Time, local bool, notAfter string) error {
	w.local = local && !w.planOnly
	var err error
	if w.start, err = parseWindowTime("--start", w.Start, now); err != nil {
		return err
	}
	if w.end, err = parseWindowTime("--end", w.End, now); err != nil {
		return err
	}
	if !w.start.IsZero() && !w.end.IsZero() && !w.start.Before(w.end) {
		return UsageErrorf("invalid --end %s: %s (--start %s)", w.End, schedule.MsgEndAfterStart, w.Start)
	}
	if !w.end.IsZero() && !w.end.After(now) {
		return UsageErrorf("invalid --end %s: it has passed", w.End)
	}
	if w.Window != "" {
		if w.recurring, err = schedule.Parse(w.Window); err != nil {
			return UsageErrorf("invalid --window %v", err)
		}
	}
	switch mntv1.WindowClose(w.OnWindowClose) {
	case "", mntv1.WindowCloseFinish, mntv1.WindowCloseStop:
	default:
		return UsageErrorf(`invalid --on-window-close %q: must be "Finish" or "Stop"`, w.OnWindowClose)
	}
	if w.OnWindowClose != "" && w.schedule() == nil {
		return UsageErrorf("--on-window-close goes with a window: --start, --end or --window")
	}
	if !w.local {
		return nil
	}
	switch {
	case w.Window != "":
		return UsageErrorf("--window needs --server-side (the controller waits for a recurring window); a local drain takes --start and --end")
	case w.OnWindowClose != "":
		return UsageErrorf("--on-window-close needs --server-side; a local drain's nodes in progress finish after --end")
	case w.End != "" && notAfter != "":
		return UsageErrorf("--end and --not-after mean the same for a local drain: give one")
	}
	return nil
}

// parseWindowTime reads an RFC 3339 time or a positive duration from now ("" is none).
func parseWindowTime(flag, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return time.Time{}, UsageErrorf("invalid %s %q: want an RFC 3339 time (2026-12-05T02:00:00Z) or a duration from now (90m)", flag, s)
	}
	if d <= 0 {
		return time.Time{}, UsageErrorf("invalid %s %q: a duration must be positive", flag, s)
	}
	return now.Add(d), nil
}

// schedule is the window the flags give (nil for none).
func (w *WindowFlags) schedule() *schedule.Window {
	if w.start.IsZero() && w.end.IsZero() && w.recurring == nil {
		return nil
	}
	return &schedule.Window{NotBefore: w.start, NotAfter: w.end, Recurring: w.recurring}
}

// windowInto sets the flags' window in a Maintenance's spec.
func (w *WindowFlags) windowInto(s *mntv1.MaintenanceSpec) {
	if w.schedule() == nil {
		return
	}
	sw := &mntv1.Window{}
	if !w.start.IsZero() {
		sw.Start = &metav1.Time{Time: w.start}
	}
	if !w.end.IsZero() {
		sw.End = &metav1.Time{Time: w.end}
	}
	if r := w.recurring; r != nil {
		sw.Recurring = &mntv1.RecurringWindow{Days: r.DayNames(), Start: r.Start.String(), End: r.End.String(), TimeZone: r.Location.String()}
	}
	s.Window = sw
	s.Policy.OnWindowClose = mntv1.WindowClose(w.OnWindowClose)
}

// localNotAfter is --end as a local run's --not-after ("" when not given).
func (w *WindowFlags) localNotAfter() time.Time {
	if w.local {
		return w.end
	}
	return time.Time{}
}

// waitForStart waits, for a local drain with --start, until the start, saying until when
// on out. Ctrl-C during the wait returns the interruption with nothing changed.
func (w *WindowFlags) waitForStart(ctx context.Context, out io.Writer, now time.Time) error {
	if !w.local || w.start.IsZero() || !w.start.After(now) {
		return nil
	}
	d := w.start.Sub(now)
	fmt.Fprintf(out, "waiting until %s (in %s) to start (--start); Ctrl-C stops the wait with nothing changed\n",
		w.start.UTC().Format(time.RFC3339), duration.HumanDuration(d))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		// Said here: main prints no error for an interruption.
		err := fmt.Errorf("interrupted while waiting for --start %s: nothing was changed", w.start.UTC().Format(time.RFC3339))
		fmt.Fprintln(out, err)
		return WithExitCode(ExitInterrupted, err)
	case <-t.C:
		return nil
	}
}

// beforeLocalRun says the window of a --dry-run, or waits for a real run's --start.
func (o *DrainOptions) beforeLocalRun(ctx context.Context) error {
	if o.DryRun != "" && o.DryRun != "none" {
		if line := windowLine(o.schedule(), o.clock()); line != "" {
			fmt.Fprintln(o.ErrOut, line)
		}
		return nil
	}
	return o.waitForStart(ctx, o.ErrOut, o.clock())
}

// windowLine says the window for plan and --dry-run: what it is and where it stands at
// now ("" when there is none).
func windowLine(w *schedule.Window, now time.Time) string {
	if w == nil {
		return ""
	}
	desc := ""
	if w.Recurring != nil {
		desc = w.Recurring.String()
	}
	if !w.NotBefore.IsZero() {
		desc = joinNonEmpty(desc, "from "+w.NotBefore.UTC().Format(time.RFC3339))
	}
	if !w.NotAfter.IsZero() {
		desc = joinNonEmpty(desc, "until "+w.NotAfter.UTC().Format(time.RFC3339))
	}
	st := w.At(now)
	switch {
	case st.Over:
		return fmt.Sprintf("Window: %s: closed for good; no node would start", desc)
	case st.Open && st.Closes.IsZero():
		return fmt.Sprintf("Window: %s: open now", desc)
	case st.Open:
		return fmt.Sprintf("Window: %s: open now, closes at %s (in %s); no node starts after it", desc,
			st.Closes.UTC().Format(time.RFC3339), duration.HumanDuration(st.Closes.Sub(now)))
	}
	return fmt.Sprintf("Window: %s: opens at %s (in %s); no node starts before it", desc,
		st.Opens.UTC().Format(time.RFC3339), duration.HumanDuration(st.Opens.Sub(now)))
}

func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}
