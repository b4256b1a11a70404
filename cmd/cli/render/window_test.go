package render

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/schedule"
)

// get's NEXT START column and describe's Window line say the window.
func TestMaintenanceWindowColumns(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	next := metav1.NewTime(now.Add(90 * time.Minute))
	tests := map[string]struct {
		m        mntv1.Maintenance
		column   string
		describe string
	}{
		"no window": {m: mntv1.Maintenance{}, column: "<none>"},
		"scheduled": {
			m: mntv1.Maintenance{Spec: mntv1.MaintenanceSpec{Window: &mntv1.Window{Recurring: &mntv1.RecurringWindow{Days: []string{"Sat", "Sun"}, Start: "02:00", End: "06:00", TimeZone: "Europe/Berlin"}}},
				Status: mntv1.MaintenanceStatus{Phase: mntv1.PhaseScheduled, NextStart: &next}},
			column:   "2026-12-01T11:30:00Z (in 90m)",
			describe: "Window:       Sat,Sun 02:00-06:00 Europe/Berlin; on close: Finish\nNext start:   2026-12-01T11:30:00Z\n"},
		"one-shot with Stop": {
			m:      mntv1.Maintenance{Spec: mntv1.MaintenanceSpec{Window: &mntv1.Window{Start: &next}, Policy: mntv1.Policy{OnWindowClose: mntv1.WindowCloseStop}}},
			column: "<none>", describe: "Window:       from 2026-12-01T11:30:00Z; on close: Stop\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			table := MaintenanceTable(&mntv1.MaintenanceList{Items: []mntv1.Maintenance{tc.m}}, now)
			col := -1
			for i, c := range table.ColumnDefinitions {
				if c.Name == "Next Start" {
					col = i
				}
			}
			if col < 0 || table.Rows[0].Cells[col] != tc.column {
				t.Errorf("Next Start column %d = %v, want %q", col, table.Rows[0].Cells, tc.column)
			}
			var b strings.Builder
			DescribeMaintenance(&b, &tc.m, nil)
			if tc.describe != "" && !strings.Contains(b.String(), tc.describe) {
				t.Errorf("describe:\n%s\nwant it to contain:\n%s", b.String(), tc.describe)
			}
			if tc.describe == "" && strings.Contains(b.String(), "Window:") {
				t.Errorf("describe says a window it has not:\n%s", b.String())
			}
		})
	}
}

// plan and --dry-run say the window and where it stands.
func TestWindowLine(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	sat, err := schedule.Parse("Sat 02:00-06:00 Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		w    *schedule.Window
		want string
	}{
		"none":       {nil, ""},
		"recurring":  {&schedule.Window{Recurring: sat}, "Window: Sat 02:00-06:00 Europe/Berlin: opens at 2026-12-05T01:00:00Z (in 3d15h); no node starts before it"},
		"open":       {&schedule.Window{NotAfter: now.Add(time.Hour)}, "Window: until 2026-12-01T11:00:00Z: open now, closes at 2026-12-01T11:00:00Z (in 60m); no node starts after it"},
		"over":       {&schedule.Window{NotBefore: now.Add(-2 * time.Hour), NotAfter: now.Add(-time.Hour)}, "Window: from 2026-12-01T08:00:00Z, until 2026-12-01T09:00:00Z: closed for good; no node would start"},
		"from start": {&schedule.Window{NotBefore: now.Add(20 * time.Second)}, "Window: from 2026-12-01T10:00:20Z: opens at 2026-12-01T10:00:20Z (in 20s); no node starts before it"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := WindowLine(tc.w, now); got != tc.want {
				t.Errorf("WindowLine = %q\nwant           %q", got, tc.want)
			}
		})
	}
}
