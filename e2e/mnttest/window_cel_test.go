package mnttest

import (
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/schedule"
)

// Windows: the API server refuses a bad spec.window with one message per mistake, in the
// words of the Go validation (package schedule), and creates nothing; a window cannot be
// added, changed or removed once the object exists.
func TestMaintenanceCELRefusesBadWindows(t *testing.T) {
	e := newEnv(t)
	mc := mclient(t)
	at := func(s string) *metav1.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return &metav1.Time{Time: v}
	}
	rec := func(days []string, start, end string) *mntv1.Window {
		return &mntv1.Window{Recurring: &mntv1.RecurringWindow{Days: days, Start: start, End: end}}
	}
	cases := map[string]struct {
		window *mntv1.Window
		close  mntv1.WindowClose
		want   string
	}{
		"an empty window":      {window: &mntv1.Window{}, want: "window: set start, end or recurring"},
		"an end before start":  {window: &mntv1.Window{Start: at("2026-12-05T06:00:00Z"), End: at("2026-12-05T02:00:00Z")}, want: "window: " + schedule.MsgEndAfterStart},
		"an unknown day":       {window: rec([]string{"Sat", "Caturday"}, "02:00", "06:00"), want: "window.recurring.days: " + schedule.MsgDays},
		"a day in full":        {window: rec([]string{"Wednesday"}, "02:00", "06:00"), want: "window.recurring.days: " + schedule.MsgDays},
		"no day":               {window: rec(nil, "02:00", "06:00"), want: "window.recurring.days: name at least one day: " + schedule.MsgDays},
		"an hour past 23":      {window: rec([]string{"Sat"}, "24:00", "06:00"), want: "window.recurring.start must be a time of day such as 02:00 (HH:MM or HH:MM:SS, 24 h)"},
		"an end in am/pm":      {window: rec([]string{"Sat"}, "02:00", "6am"), want: "window.recurring.end must be a time of day"},
		"a range of no length": {window: rec([]string{"Sat"}, "02:00", "02:00"), want: "window.recurring: " + schedule.MsgSameStartEnd},
		"a lower-case stop":    {window: rec([]string{"Sat"}, "02:00", "06:00"), close: "stop", want: "onWindowClose must be Finish or Stop"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := e.NS + "-" + strings.ReplaceAll(strings.ReplaceAll(name, " ", "-"), "/", "")
			m := &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: obj}, Spec: mntv1.MaintenanceSpec{Action: mntv1.ActionDrain,
				Nodes: []string{"n1"}, Window: tc.window, Policy: mntv1.Policy{OnWindowClose: tc.close}}}
			err := mc.Create(e.Ctx, m)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("create: %v, want Invalid", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("message %q does not say %q", err.Error(), tc.want)
			}
			var se *apierrors.StatusError
			if errors.As(err, &se) && se.ErrStatus.Details != nil && len(se.ErrStatus.Details.Causes) != 1 {
				t.Errorf("%d causes, want one message for one mistake: %q", len(se.ErrStatus.Details.Causes), err.Error())
			}
			if err := mc.Get(e.Ctx, types.NamespacedName{Name: obj}, &mntv1.Maintenance{}); !apierrors.IsNotFound(err) {
				t.Errorf("after the refusal: %v, want NotFound", err)
			}
		})
	}
	// Valid forms are taken; the window is as immutable as the rest of the spec.
	with := e.NS + "-with"
	create(e, mc, with, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: []string{"n1"}, Paused: true,
		Window: &mntv1.Window{Start: at("2099-12-05T02:00:00Z"), Recurring: &mntv1.RecurringWindow{Days: []string{"Sat", "Sun"}, Start: "22:00:30", End: "02:00", TimeZone: "Europe/Berlin"}},
		Policy: mntv1.Policy{OnWindowClose: mntv1.WindowCloseStop}})
	without := e.NS + "-without"
	create(e, mc, without, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: []string{"n1"}, Paused: true})
	for name, p := range map[string]struct{ obj, body string }{
		"a changed window": {with, `{"spec":{"window":{"recurring":{"start":"23:00"}}}}`},
		"a removed window": {with, `{"spec":{"window":null}}`},
		"an added window":  {without, `{"spec":{"window":{"start":"2099-12-05T02:00:00Z"}}}`},
	} {
		err := mc.Patch(e.Ctx, &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: p.obj}}, client.RawPatch(types.MergePatchType, []byte(p.body)))
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "only spec.paused and spec.reason may change") {
			t.Errorf("%s: %v, want Invalid saying only paused and reason may change", name, err)
		}
	}
}
