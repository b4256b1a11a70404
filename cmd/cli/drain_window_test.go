package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// Bad window flags are refused before any API call (these run with no cluster), one line,
// exit 2.
func TestWindowFlagsBadInput(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"a start that is no time":        {[]string{"drain", "n1", "--server-side", "--start", "Saturday"}, `invalid --start "Saturday": want an RFC 3339 time`},
		"an end before the start":        {[]string{"drain", "n1", "--server-side", "--start", "2099-12-05T06:00:00Z", "--end", "2099-12-05T02:00:00Z"}, "invalid --end 2099-12-05T02:00:00Z: end must be after start"},
		"an end that has passed":         {[]string{"drain", "n1", "--server-side", "--end", "2020-01-01T00:00:00Z"}, "invalid --end 2020-01-01T00:00:00Z: it has passed"},
		"a negative duration":            {[]string{"drain", "n1", "--start", "-5m"}, `invalid --start "-5m": a duration must be positive`},
		"a window with an unknown day":   {[]string{"drain", "n1", "--server-side", "--window", "Caturday 02:00-06:00 UTC"}, `"Caturday" is not a day: each day is Mon, Tue, Wed, Thu, Fri, Sat or Sun`},
		"a window with a bad hour":       {[]string{"drain", "n1", "--server-side", "--window", "Sat 25:00-06:00 UTC"}, `"25:00" must be a time of day such as 02:00`},
		"a window with an unknown zone":  {[]string{"drain", "n1", "--server-side", "--window", "Sat 02:00-06:00 Europe/Atlantis"}, `"Europe/Atlantis" is not an IANA time zone`},
		"a window of no length":          {[]string{"drain", "n1", "--server-side", "--window", "Sat 02:00-02:00 UTC"}, "end must differ from start"},
		"a window on a local drain":      {[]string{"drain", "n1", "--window", "Sat 02:00-06:00 UTC"}, "--window needs --server-side"},
		"--end and --not-after, locally": {[]string{"drain", "n1", "--end", "2h", "--not-after", "3h"}, "--end and --not-after mean the same for a local drain: give one"},
		"a bad on-window-close":          {[]string{"drain", "n1", "--server-side", "--end", "2h", "--on-window-close", "stop"}, `invalid --on-window-close "stop": must be "Finish" or "Stop"`},
		"on-window-close without window": {[]string{"drain", "n1", "--server-side", "--on-window-close", "Stop"}, "--on-window-close goes with a window"},
		"on-window-close on a local run": {[]string{"drain", "n1", "--end", "2h", "--on-window-close", "Stop"}, "--on-window-close needs --server-side"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, errOut, code := run(tc.args...)
			if code != ExitUsage || out != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing on stdout (stderr %q)", code, out, errOut)
			}
			if !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("stderr = %q, want one line containing %q", errOut, tc.want)
			}
		})
	}
}

// The flags become the Maintenance's spec.window and policy.onWindowClose as given; a
// local run's --end is its --not-after.
func TestWindowFlagsIntoSpec(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		flags    WindowFlags
		local    bool
		window   *mntv1.Window
		close    mntv1.WindowClose
		notAfter time.Time
	}{
		"no window flags: no window": {flags: WindowFlags{}},
		"start and end": {flags: WindowFlags{Start: "2026-12-05T02:00:00Z", End: "2026-12-05T06:00:00Z", OnWindowClose: "Stop"},
			window: &mntv1.Window{Start: mtime("2026-12-05T02:00:00Z"), End: mtime("2026-12-05T06:00:00Z")}, close: mntv1.WindowCloseStop},
		"a start as a duration from now": {flags: WindowFlags{Start: "20s"},
			window: &mntv1.Window{Start: mtime("2026-12-01T10:00:20Z")}},
		"a recurring window": {flags: WindowFlags{Window: "Sat,Sun 02:00-06:00 Europe/Berlin"},
			window: &mntv1.Window{Recurring: &mntv1.RecurringWindow{Days: []string{"Sat", "Sun"}, Start: "02:00", End: "06:00", TimeZone: "Europe/Berlin"}}},
		"a recurring window with seconds, in UTC by default": {flags: WindowFlags{Window: "Tue 10:00:30-10:01:00"},
			window: &mntv1.Window{Recurring: &mntv1.RecurringWindow{Days: []string{"Tue"}, Start: "10:00:30", End: "10:01", TimeZone: "UTC"}}},
		"a local --end is the run's not-after": {flags: WindowFlags{End: "2h"}, local: true, notAfter: now.Add(2 * time.Hour)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w := tc.flags
			if err := w.validateWindow(now, tc.local, ""); err != nil {
				t.Fatal(err)
			}
			if got := w.localNotAfter(); !got.Equal(tc.notAfter) {
				t.Errorf("local not-after %s, want %s", got, tc.notAfter)
			}
			if tc.local {
				return
			}
			var s mntv1.MaintenanceSpec
			w.windowInto(&s)
			if !equalWindow(s.Window, tc.window) || s.Policy.OnWindowClose != tc.close {
				t.Errorf("window %+v (on close %q), want %+v (%q)", s.Window, s.Policy.OnWindowClose, tc.window, tc.close)
			}
		})
	}
}

// A local drain's --start wait ends at Ctrl-C with the interruption's exit code, saying
// until when it waited.
func TestWaitForStartInterrupted(t *testing.T) {
	now := time.Now()
	w := WindowFlags{Start: "1h"}
	if err := w.validateWindow(now, true, ""); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out strings.Builder
	err := w.waitForStart(ctx, &out, now)
	if ExitCode(err) != ExitInterrupted || !strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("err %v (exit %d), want the interruption with nothing changed", err, ExitCode(err))
	}
	if !strings.Contains(out.String(), "waiting until "+now.Add(time.Hour).UTC().Format(time.RFC3339)) || !strings.Contains(out.String(), "nothing was changed") {
		t.Errorf("output %q does not say until when and that nothing changed", out.String())
	}
}

func mtime(s string) *metav1.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return &metav1.Time{Time: t}
}

func equalWindow(a, b *mntv1.Window) bool {
	if a == nil || b == nil {
		return a == b
	}
	eqT := func(x, y *metav1.Time) bool {
		if x == nil || y == nil {
			return x == y
		}
		return x.Equal(&metav1.Time{Time: y.Time})
	}
	if !eqT(a.Start, b.Start) || !eqT(a.End, b.End) || (a.Recurring == nil) != (b.Recurring == nil) {
		return false
	}
	if a.Recurring == nil {
		return true
	}
	x, y := a.Recurring, b.Recurring
	return strings.Join(x.Days, ",") == strings.Join(y.Days, ",") && x.Start == y.Start && x.End == y.End && x.TimeZone == y.TimeZone
}
