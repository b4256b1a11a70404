package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/completion"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/render"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
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

	// window is what the flags give (validateWindow), nil for none.
	window *schedule.Window
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
		_ = cmd.RegisterFlagCompletionFunc("on-window-close", completion.FixedChoices("Finish", "Stop"))
	}
}

// validateWindow checks the window flags at now (schedule.Flags reads them); local is
// true for a run in this process.
func (w *WindowFlags) validateWindow(now time.Time, local bool, notAfter string) error {
	w.local = local && !w.planOnly
	var err error
	if w.window, err = (schedule.Flags{Start: w.Start, End: w.End, Window: w.Window}).Read(now); err != nil {
		return WithExitCode(ExitUsage, err)
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

// schedule is the window the flags give (nil for none).
func (w *WindowFlags) schedule() *schedule.Window { return w.window }

// windowInto sets the flags' window in a Maintenance's spec.
func (w *WindowFlags) windowInto(s *mntv1.MaintenanceSpec) {
	maintenance.WindowInto(s, w.window, mntv1.WindowClose(w.OnWindowClose))
}

// localNotAfter is --end as a local run's --not-after ("" when not given).
func (w *WindowFlags) localNotAfter() time.Time {
	if w.local && w.window != nil {
		return w.window.NotAfter
	}
	return time.Time{}
}

// waitForStart waits, for a local drain with --start, until the start, saying until when
// on out. Ctrl-C during the wait returns the interruption with nothing changed.
func (w *WindowFlags) waitForStart(ctx context.Context, out io.Writer, now time.Time) error {
	if !w.local || w.window == nil {
		return nil
	}
	return WithExitCode(ExitInterrupted, schedule.WaitForStart(ctx, out, w.window.NotBefore, now))
}

// beforeLocalRun says the window of a --dry-run, or waits for a real run's --start.
func (o *DrainOptions) beforeLocalRun(ctx context.Context) error {
	if o.DryRun != "" && o.DryRun != "none" {
		if line := render.WindowLine(o.schedule(), o.clock()); line != "" {
			fmt.Fprintln(o.ErrOut, line)
		}
		return nil
	}
	return o.waitForStart(ctx, o.ErrOut, o.clock())
}
