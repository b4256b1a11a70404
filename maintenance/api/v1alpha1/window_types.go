package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Windows (planned maintenance).

// Window is a one-shot window (start, end; both optional) and, optionally, a recurring
// one inside it.
// +kubebuilder:validation:XValidation:rule="has(self.start) || has(self.end) || has(self.recurring)",message="window: set start, end or recurring"
// +kubebuilder:validation:XValidation:rule="!has(self.start) || !has(self.end) || self.start < self.end",message="window: end must be after start"
type Window struct {
	// Start is the time before which no node starts (RFC 3339).
	// +optional
	Start *metav1.Time `json:"start,omitempty"`
	// End is the time after which no node starts (RFC 3339); policy.onWindowClose says
	// what nodes in progress do.
	// +optional
	End *metav1.Time `json:"end,omitempty"`
	// Recurring opens the window on some days of the week for a time range, in a time
	// zone (within start and end when they are set).
	// +optional
	Recurring *RecurringWindow `json:"recurring,omitempty"`
}

// RecurringWindow is a weekly window: on each of days, from start to end, wall-clock
// time in timeZone. An end before the start closes on the next day.
// +kubebuilder:validation:XValidation:rule="self.start != self.end",message="window.recurring: end must differ from start (an end before the start closes on the next day)"
// +kubebuilder:validation:XValidation:rule="has(self.days) && size(self.days) > 0",message="window.recurring.days: name at least one day: each day is Mon, Tue, Wed, Thu, Fri, Sat or Sun"
type RecurringWindow struct {
	// Days are the days the window opens (at least one): Mon, Tue, Wed, Thu, Fri, Sat, Sun.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=7
	// +kubebuilder:validation:items:MaxLength=16
	// +kubebuilder:validation:XValidation:rule="self.all(d, d in ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'])",message="window.recurring.days: each day is Mon, Tue, Wed, Thu, Fri, Sat or Sun"
	Days []string `json:"days,omitempty"`
	// Start is the time of day the window opens (HH:MM or HH:MM:SS, 24 h).
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="self.matches('^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$')",message="window.recurring.start must be a time of day such as 02:00 (HH:MM or HH:MM:SS, 24 h)"
	Start string `json:"start"`
	// End is the time of day the window closes (HH:MM or HH:MM:SS, 24 h).
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="self.matches('^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$')",message="window.recurring.end must be a time of day such as 06:00 (HH:MM or HH:MM:SS, 24 h)"
	End string `json:"end"`
	// TimeZone is an IANA time zone name (Europe/Berlin); default UTC.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	TimeZone string `json:"timeZone,omitempty"`
}

// WindowClose is what nodes in progress do when the window closes.
type WindowClose string

// What nodes in progress do when the window closes.
const (
	// WindowCloseFinish: they drain to the end (the default).
	WindowCloseFinish WindowClose = "Finish"
	// WindowCloseStop: they stop at once, cordoned with their state.
	WindowCloseStop WindowClose = "Stop"
)
