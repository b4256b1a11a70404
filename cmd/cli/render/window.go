package render

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-maintenance/kubectl-maintenance/schedule"
)

// WindowLine says the window for plan and --dry-run: what it is and where it stands at
// now ("" when there is none).
func WindowLine(w *schedule.Window, now time.Time) string {
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
