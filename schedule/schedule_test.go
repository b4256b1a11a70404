package schedule

import (
	"strings"
	"testing"
	"time"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func mustParse(t *testing.T, s string) *Recurring {
	t.Helper()
	r, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestWindowAt(t *testing.T) {
	sat := "Sat 02:00-06:00 Europe/Berlin"
	tests := map[string]struct {
		window string // a recurring window, or "" for none
		from   string // NotBefore
		until  string // NotAfter
		now    string
		want   State
	}{
		"no window is open for ever": {now: "2026-12-05T01:00:00Z",
			want: State{Open: true}},
		"one-shot before its start opens at the start": {from: "2026-12-05T02:00:00Z", until: "2026-12-05T06:00:00Z", now: "2026-12-05T01:00:00Z",
			want: State{Opens: utc("2026-12-05T02:00:00Z")}},
		"one-shot at its start is open until its end": {from: "2026-12-05T02:00:00Z", until: "2026-12-05T06:00:00Z", now: "2026-12-05T02:00:00Z",
			want: State{Open: true, Closes: utc("2026-12-05T06:00:00Z")}},
		"one-shot at its end is over": {from: "2026-12-05T02:00:00Z", until: "2026-12-05T06:00:00Z", now: "2026-12-05T06:00:00Z",
			want: State{Over: true}},
		"only an end: open until it": {until: "2026-12-05T06:00:00Z", now: "2026-12-01T00:00:00Z",
			want: State{Open: true, Closes: utc("2026-12-05T06:00:00Z")}},
		"only a start: open for ever once started": {from: "2026-12-05T02:00:00Z", now: "2026-12-06T00:00:00Z",
			want: State{Open: true}},
		"recurring in winter (CET, UTC+1) opens 01:00Z": {window: sat, now: "2026-12-02T10:00:00Z",
			want: State{Opens: utc("2026-12-05T01:00:00Z")}},
		"recurring in summer (CEST, UTC+2) opens 00:00Z": {window: sat, now: "2026-07-01T10:00:00Z",
			want: State{Opens: utc("2026-07-04T00:00:00Z")}},
		"recurring inside its range is open until its end": {window: sat, now: "2026-12-05T03:00:00Z",
			want: State{Open: true, Closes: utc("2026-12-05T05:00:00Z")}},
		"recurring at its end waits a week": {window: sat, now: "2026-12-05T05:00:00Z",
			want: State{Opens: utc("2026-12-12T01:00:00Z")}},
		"week wrap: Sunday's window after Saturday's": {window: "Sat,Sun 02:00-06:00 UTC", now: "2026-12-05T07:00:00Z",
			want: State{Opens: utc("2026-12-06T02:00:00Z")}},
		"week wrap: from Sunday evening to next Saturday": {window: "Sat 02:00-06:00 UTC", now: "2026-12-06T23:00:00Z",
			want: State{Opens: utc("2026-12-12T02:00:00Z")}},
		"over midnight: Saturday 22:00 is open on Sunday 01:00": {window: "Sat 22:00-02:00 UTC", now: "2026-12-06T01:00:00Z",
			want: State{Open: true, Closes: utc("2026-12-06T02:00:00Z")}},
		"over the year's end": {window: "Fri 23:00-01:00 UTC", now: "2026-12-31T12:00:00Z",
			want: State{Opens: utc("2027-01-01T23:00:00Z")}},
		"spring forward: a range over the jump is an hour shorter": {window: "Sun 01:00-04:00 Europe/Berlin", now: "2026-03-29T00:30:00Z",
			want: State{Open: true, Closes: utc("2026-03-29T02:00:00Z")}},
		"spring forward: a start in the gap is the jump": {window: "Sun 02:30-05:00 Europe/Berlin", now: "2026-03-28T12:00:00Z",
			want: State{Opens: utc("2026-03-29T01:00:00Z")}},
		"fall back: a range over the change is an hour longer": {window: "Sun 01:00-04:00 Europe/Berlin", now: "2026-10-24T23:00:00Z",
			want: State{Open: true, Closes: utc("2026-10-25T03:00:00Z")}},
		"fall back: a start that exists twice is the first": {window: "Sun 02:30-05:00 Europe/Berlin", now: "2026-10-24T12:00:00Z",
			want: State{Opens: utc("2026-10-25T00:30:00Z")}},
		"recurring starts no earlier than its start": {window: "Sat 02:00-06:00 UTC", from: "2026-12-05T04:00:00Z", now: "2026-12-01T00:00:00Z",
			want: State{Opens: utc("2026-12-05T04:00:00Z")}},
		"recurring closes at its end": {window: "Sat 02:00-06:00 UTC", until: "2026-12-05T03:00:00Z", now: "2026-12-05T02:30:00Z",
			want: State{Open: true, Closes: utc("2026-12-05T03:00:00Z")}},
		"recurring whose end passed is over": {window: "Sat 02:00-06:00 UTC", until: "2026-12-10T00:00:00Z", now: "2026-12-05T07:00:00Z",
			want: State{Over: true}},
		"seconds: a range of seconds": {window: "Sat 10:00:05-10:00:25 UTC", now: "2026-12-05T10:00:00Z",
			want: State{Opens: utc("2026-12-05T10:00:05Z")}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var w Window
			if tc.window != "" {
				w.Recurring = mustParse(t, tc.window)
			}
			if tc.from != "" {
				w.NotBefore = utc(tc.from)
			}
			if tc.until != "" {
				w.NotAfter = utc(tc.until)
			}
			got := w.At(utc(tc.now))
			if got.Open != tc.want.Open || got.Over != tc.want.Over || !got.Opens.Equal(tc.want.Opens) || !got.Closes.Equal(tc.want.Closes) {
				t.Errorf("At(%s) = %+v, want %+v", tc.now, got, tc.want)
			}
		})
	}
}

func TestParse(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    string // String() of the result
		wantErr string
	}{
		"one day with a zone":        {in: "Sat 02:00-06:00 Europe/Berlin", want: "Sat 02:00-06:00 Europe/Berlin"},
		"two days, UTC":              {in: "Sat,Sun 02:00-06:00 UTC", want: "Sat,Sun 02:00-06:00 UTC"},
		"the zone defaults to UTC":   {in: "mon 22:00-02:00", want: "Mon 22:00-02:00 UTC"},
		"a day twice counts once":    {in: "Sat,sat 02:00-06:00", want: "Sat 02:00-06:00 UTC"},
		"seconds":                    {in: "Fri 10:00:05-10:00:30 UTC", want: "Fri 10:00:05-10:00:30 UTC"},
		"an unknown day":             {in: "Saturday 02:00-06:00 UTC", wantErr: `window.days: "Saturday" is not a day: each day is Mon, Tue, Wed, Thu, Fri, Sat or Sun`},
		"an hour past 23":            {in: "Sat 24:00-06:00 UTC", wantErr: `window.start: "24:00" must be a time of day such as 02:00 (HH:MM or HH:MM:SS, 24 h)`},
		"a one-digit hour":           {in: "Sat 2:00-06:00 UTC", wantErr: `window.start: "2:00" must be a time of day`},
		"a bad end":                  {in: "Sat 02:00-6pm UTC", wantErr: `window.end: "6pm" must be a time of day`},
		"no range":                   {in: "Sat 02:00-02:00 UTC", wantErr: "window: end must differ from start"},
		"no dash":                    {in: "Sat 02:00 UTC", wantErr: `the time range "02:00" needs a dash`},
		"an unknown zone":            {in: "Sat 02:00-06:00 Mars/Olympus", wantErr: `window.timeZone: "Mars/Olympus" is not an IANA time zone`},
		"Local is not a zone to use": {in: "Sat 02:00-06:00 Local", wantErr: `"Local" is not an IANA time zone: name it`},
		"only days":                  {in: "Sat", wantErr: "want DAYS START-END [ZONE]"},
		"too many words":             {in: "Sat 02:00-06:00 UTC extra", wantErr: "want DAYS START-END [ZONE]"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := Parse(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse(%q) error %v, want one containing %q", tc.in, err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := r.String(); got != tc.want {
				t.Errorf("Parse(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
