package schedule

import (
	"fmt"
	"strings"
	"time"
)

// The words of the errors below are the CRD's (maintenance/api/v1alpha1): the API
// server's rules and this package refuse each mistake with the same message.
const (
	// MsgDays says what a day is.
	MsgDays = "each day is Mon, Tue, Wed, Thu, Fri, Sat or Sun"
	// MsgTimeOfDay says what a time of day is.
	MsgTimeOfDay = "must be a time of day such as 02:00 (HH:MM or HH:MM:SS, 24 h)"
	// MsgSameStartEnd says that a range needs a length.
	MsgSameStartEnd = "end must differ from start (an end before the start closes on the next day)"
	// MsgEndAfterStart says that a one-shot window ends after it starts.
	MsgEndAfterStart = "end must be after start"
)

var dayNames = map[string]time.Weekday{
	"mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday, "thu": time.Thursday,
	"fri": time.Friday, "sat": time.Saturday, "sun": time.Sunday,
}

// ParseDay reads a day of the week: Mon, Tue, Wed, Thu, Fri, Sat or Sun (any case).
func ParseDay(s string) (time.Weekday, error) {
	d, ok := dayNames[strings.ToLower(s)]
	if !ok {
		return 0, fmt.Errorf("%q is not a day: %s", s, MsgDays)
	}
	return d, nil
}

// ParseTimeOfDay reads HH:MM or HH:MM:SS (24 h).
func ParseTimeOfDay(s string) (TimeOfDay, error) {
	var t TimeOfDay
	var err error
	switch len(s) {
	case 5:
		var v time.Time
		v, err = time.Parse("15:04", s)
		t = TimeOfDay{Hour: v.Hour(), Minute: v.Minute()}
	case 8:
		var v time.Time
		v, err = time.Parse("15:04:05", s)
		t = TimeOfDay{Hour: v.Hour(), Minute: v.Minute(), Second: v.Second()}
	default:
		err = fmt.Errorf("length")
	}
	if err != nil {
		return TimeOfDay{}, fmt.Errorf("%q %s", s, MsgTimeOfDay)
	}
	return t, nil
}

// ParseZone reads an IANA time zone name (Europe/Berlin, UTC); "" is UTC.
func ParseZone(s string) (*time.Location, error) {
	if s == "" {
		return time.UTC, nil
	}
	if strings.EqualFold(s, "local") {
		return nil, fmt.Errorf("%q is not an IANA time zone: name it (Europe/Berlin, UTC)", s)
	}
	loc, err := time.LoadLocation(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not an IANA time zone such as Europe/Berlin or UTC", s)
	}
	return loc, nil
}

// NewRecurring checks and builds a recurring window from its parts as the CRD has them;
// field prefixes each error ("spec.window.recurring").
func NewRecurring(field string, days []string, start, end, zone string) (*Recurring, error) {
	r := &Recurring{}
	if len(days) == 0 {
		return nil, fmt.Errorf("%s.days: name at least one day: %s", field, MsgDays)
	}
	seen := map[time.Weekday]bool{}
	for _, s := range days {
		d, err := ParseDay(s)
		if err != nil {
			return nil, fmt.Errorf("%s.days: %w", field, err)
		}
		if !seen[d] {
			seen[d] = true
			r.Days = append(r.Days, d)
		}
	}
	var err error
	if r.Start, err = ParseTimeOfDay(start); err != nil {
		return nil, fmt.Errorf("%s.start: %w", field, err)
	}
	if r.End, err = ParseTimeOfDay(end); err != nil {
		return nil, fmt.Errorf("%s.end: %w", field, err)
	}
	if r.Start == r.End {
		return nil, fmt.Errorf("%s: %s", field, MsgSameStartEnd)
	}
	if r.Location, err = ParseZone(zone); err != nil {
		return nil, fmt.Errorf("%s.timeZone: %w", field, err)
	}
	return r, nil
}

// Parse reads a recurring window as one string: "DAYS START-END [ZONE]", such as
// "Sat 02:00-06:00 Europe/Berlin" or "Sat,Sun 02:00-06:00 UTC" (the zone defaults to UTC).
func Parse(s string) (*Recurring, error) {
	f := strings.Fields(s)
	if len(f) < 2 || len(f) > 3 {
		return nil, fmt.Errorf("%q: want DAYS START-END [ZONE], such as 'Sat 02:00-06:00 Europe/Berlin' or 'Sat,Sun 02:00-06:00 UTC'", s)
	}
	start, end, ok := strings.Cut(f[1], "-")
	if !ok {
		return nil, fmt.Errorf("%q: the time range %q needs a dash: START-END, such as 02:00-06:00", s, f[1])
	}
	zone := "UTC"
	if len(f) == 3 {
		zone = f[2]
	}
	r, err := NewRecurring("window", strings.Split(f[0], ","), start, end, zone)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", s, err)
	}
	return r, nil
}

// DayNames are r's days as the CRD writes them (Mon ... Sun).
func (r *Recurring) DayNames() []string {
	out := make([]string, 0, len(r.Days))
	for _, d := range r.Days {
		out = append(out, d.String()[:3])
	}
	return out
}
