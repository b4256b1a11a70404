// Package render writes what the commands show a person or a script: a run's events and
// summary (event.Event, drain.Summary) as kubectl drain's lines or as the NDJSON stream
// (-o json, whose schema is EventsVersion), a drain's plan, a move's plan, the lines of a
// cordon or an uncordon, and an error as one line. Every renderer takes an io.Writer (or
// two: results on stdout, warnings and waits on stderr); the bytes they write are public
// interface (runbooks and the e2e tests match them).
//
// It never calls the API and imports neither cobra nor bubbletea; cmd/cli picks the
// renderer from its flags and feeds it the operations layer's events.
package render
