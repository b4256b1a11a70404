package maintenance

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/schedule"
)

// WindowInto sets w as s's spec.window (nothing when w is nil), with onClose as its
// policy.onWindowClose: the front ends' one translation of a window into a spec (Window
// reads it back).
func WindowInto(s *v1alpha1.MaintenanceSpec, w *schedule.Window, onClose v1alpha1.WindowClose) {
	if w == nil {
		return
	}
	sw := &v1alpha1.Window{}
	if !w.NotBefore.IsZero() {
		sw.Start = &metav1.Time{Time: w.NotBefore}
	}
	if !w.NotAfter.IsZero() {
		sw.End = &metav1.Time{Time: w.NotAfter}
	}
	if r := w.Recurring; r != nil {
		sw.Recurring = &v1alpha1.RecurringWindow{Days: r.DayNames(), Start: r.Start.String(), End: r.End.String(), TimeZone: r.Location.String()}
	}
	s.Window = sw
	s.Policy.OnWindowClose = onClose
}
