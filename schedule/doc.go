// Package schedule is the arithmetic of maintenance windows: a one-shot window (a start
// and an end, both optional) and a recurring one (days of the week, a time-of-day range
// and an IANA time zone, such as Saturdays 02:00-06:00 Europe/Berlin), possibly bounded by
// the one-shot start and end. Window.At says, at a given instant, whether the window is
// open and until when, or when it opens next, or that it never opens again.
//
// Times of day are wall-clock times in the window's zone, so a window keeps its local
// hours across daylight-saving changes (its length changes instead). A start or end that
// does not exist on a spring-forward day is the instant the clocks jump; one that exists
// twice on a fall-back day is its first occurrence.
//
// The package makes no API call and reads no clock: the caller passes the instant.
package schedule
