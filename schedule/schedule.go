package schedule

import (
	"fmt"
	"time"
)

// Window is when a maintenance may start nodes. The zero value is always open.
type Window struct {
	// NotBefore: nothing opens before it (zero: no bound).
	NotBefore time.Time
	// NotAfter: everything closes at it (zero: no bound).
	NotAfter time.Time
	// Recurring, when set, is open only in its ranges (within NotBefore and NotAfter).
	Recurring *Recurring
}

// State is a Window at an instant.
type State struct {
	// Open: the window is open now.
	Open bool
	// Closes is when the open window closes (zero: never). Set only when Open.
	Closes time.Time
	// Opens is when the window opens next. Set only when neither Open nor Over.
	Opens time.Time
	// Over: the window never opens again.
	Over bool
}

// At is w at now.
func (w Window) At(now time.Time) State {
	if w.Recurring == nil {
		return span{w.NotBefore, w.NotAfter}.at(now)
	}
	base := now
	if w.NotBefore.After(base) {
		base = w.NotBefore
	}
	if !w.NotAfter.IsZero() && !now.Before(w.NotAfter) {
		return State{Over: true}
	}
	var next time.Time
	for _, occ := range w.Recurring.around(base) {
		s := occ.clip(w.NotBefore, w.NotAfter)
		if !s.start.Before(s.end) {
			continue
		}
		if !now.Before(s.start) && now.Before(s.end) {
			return State{Open: true, Closes: s.end}
		}
		if s.start.After(now) && (next.IsZero() || s.start.Before(next)) {
			next = s.start
		}
	}
	if next.IsZero() {
		return State{Over: true}
	}
	return State{Opens: next}
}

// span is [start, end); a zero start or end is unbounded.
type span struct{ start, end time.Time }

func (s span) at(now time.Time) State {
	switch {
	case !s.end.IsZero() && !now.Before(s.end):
		return State{Over: true}
	case !s.start.IsZero() && now.Before(s.start):
		return State{Opens: s.start}
	}
	return State{Open: true, Closes: s.end}
}

// clip is s within [notBefore, notAfter) (zero bounds are none).
func (s span) clip(notBefore, notAfter time.Time) span {
	if notBefore.After(s.start) {
		s.start = notBefore
	}
	if !notAfter.IsZero() && notAfter.Before(s.end) {
		s.end = notAfter
	}
	return s
}

// Recurring is a weekly window: on each of Days, from Start to End (wall clock in
// Location). An End not after Start closes on the next day (Sat 22:00-02:00 closes on
// Sunday at 02:00).
type Recurring struct {
	Days     []time.Weekday
	Start    TimeOfDay
	End      TimeOfDay
	Location *time.Location
}

// around is every occurrence that opens from the day before base to eight days after
// (each weekday at least once, and one still open at base).
func (r *Recurring) around(base time.Time) []span {
	loc := r.Location
	if loc == nil {
		loc = time.UTC
	}
	local := base.In(loc)
	y, m, d := local.Date()
	var out []span
	for i := -1; i <= 8; i++ {
		day := time.Date(y, m, d+i, 12, 0, 0, 0, loc)
		if !r.on(day.Weekday()) {
			continue
		}
		start := wall(day, r.Start, loc)
		endDay := day
		if r.End.seconds() <= r.Start.seconds() {
			endDay = time.Date(day.Year(), day.Month(), day.Day()+1, 12, 0, 0, 0, loc)
		}
		out = append(out, span{start, wall(endDay, r.End, loc)})
	}
	return out
}

func (r *Recurring) on(wd time.Weekday) bool {
	for _, d := range r.Days {
		if d == wd {
			return true
		}
	}
	return false
}

// wall is the instant of tod on day's date in loc: a time that does not exist (a spring
// forward) is the instant of the jump, one that exists twice (a fall back) the first.
func wall(day time.Time, tod TimeOfDay, loc *time.Location) time.Time {
	y, m, d := day.Date()
	t := time.Date(y, m, d, tod.Hour, tod.Minute, tod.Second, 0, loc)
	if !sameWall(t, y, m, d, tod) { // in a gap: the zone boundary next to t is the jump
		start, end := t.ZoneBounds()
		if !start.IsZero() && t.Sub(start) < 3*time.Hour {
			return start
		}
		return end
	}
	for _, back := range []time.Duration{2 * time.Hour, time.Hour, 30 * time.Minute} {
		if e := t.Add(-back); sameWall(e, y, m, d, tod) {
			return e
		}
	}
	return t
}

func sameWall(t time.Time, y int, m time.Month, d int, tod TimeOfDay) bool {
	ty, tm, td := t.Date()
	return ty == y && tm == m && td == d && t.Hour() == tod.Hour && t.Minute() == tod.Minute && t.Second() == tod.Second
}

// TimeOfDay is a wall-clock time.
type TimeOfDay struct{ Hour, Minute, Second int }

func (t TimeOfDay) seconds() int { return t.Hour*3600 + t.Minute*60 + t.Second }

// String is HH:MM, or HH:MM:SS when it has seconds.
func (t TimeOfDay) String() string {
	if t.Second != 0 {
		return fmt.Sprintf("%02d:%02d:%02d", t.Hour, t.Minute, t.Second)
	}
	return fmt.Sprintf("%02d:%02d", t.Hour, t.Minute)
}

// String is the window as --window takes it: "Sat,Sun 02:00-06:00 Europe/Berlin".
func (r *Recurring) String() string {
	days := ""
	for i, d := range r.Days {
		if i > 0 {
			days += ","
		}
		days += d.String()[:3]
	}
	loc := "UTC"
	if r.Location != nil {
		loc = r.Location.String()
	}
	return fmt.Sprintf("%s %s-%s %s", days, r.Start, r.End, loc)
}
