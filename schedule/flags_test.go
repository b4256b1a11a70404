package schedule

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestFlagsRead(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := map[string]struct {
		flags          Flags
		start, end     time.Time
		recurring      string
		none           bool
		wantErrContain string
	}{
		"no flags: no window":                    {none: true},
		"start and end as times":                 {flags: Flags{Start: "2026-12-05T02:00:00Z", End: "2026-12-05T06:00:00Z"}, start: at("2026-12-05T02:00:00Z"), end: at("2026-12-05T06:00:00Z")},
		"a start as a duration from now":         {flags: Flags{Start: "20s"}, start: now.Add(20 * time.Second)},
		"a recurring window":                     {flags: Flags{Window: "Sat,Sun 02:00-06:00 Europe/Berlin"}, recurring: "Sat,Sun 02:00-06:00 Europe/Berlin"},
		"a start that is no time":                {flags: Flags{Start: "Saturday"}, wantErrContain: `invalid --start "Saturday": want an RFC 3339 time`},
		"a negative duration":                    {flags: Flags{End: "-5m"}, wantErrContain: `invalid --end "-5m": a duration must be positive`},
		"an end before the start":                {flags: Flags{Start: "2099-12-05T06:00:00Z", End: "2099-12-05T02:00:00Z"}, wantErrContain: "invalid --end 2099-12-05T02:00:00Z: end must be after start (--start 2099-12-05T06:00:00Z)"},
		"an end that has passed":                 {flags: Flags{End: "2020-01-01T00:00:00Z"}, wantErrContain: "invalid --end 2020-01-01T00:00:00Z: it has passed"},
		"a recurring window with an unknown day": {flags: Flags{Window: "Caturday 02:00-06:00 UTC"}, wantErrContain: `invalid --window "Caturday 02:00-06:00 UTC": window.days: "Caturday" is not a day`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w, err := tc.flags.Read(now)
			if tc.wantErrContain != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrContain) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErrContain)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.none {
				if w != nil {
					t.Errorf("window %+v, want none", w)
				}
				return
			}
			if !w.NotBefore.Equal(tc.start) || !w.NotAfter.Equal(tc.end) {
				t.Errorf("window from %s until %s, want %s and %s", w.NotBefore, w.NotAfter, tc.start, tc.end)
			}
			if got := ""; w.Recurring != nil {
				got = w.Recurring.String()
				if got != tc.recurring {
					t.Errorf("recurring %q, want %q", got, tc.recurring)
				}
			} else if tc.recurring != "" {
				t.Errorf("no recurring window, want %q", tc.recurring)
			}
		})
	}
}

func TestWaitForStart(t *testing.T) {
	now := time.Now()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := map[string]struct {
		ctx       context.Context
		start     time.Time
		wantErr   bool
		wantWords string
	}{
		"no start: no wait":                     {ctx: cancelled},
		"a start that has come: no wait":        {ctx: cancelled, start: now.Add(-time.Minute)},
		"interrupted: says nothing was changed": {ctx: cancelled, start: now.Add(time.Hour), wantErr: true, wantWords: "waiting until " + now.Add(time.Hour).UTC().Format(time.RFC3339)},
		"a start a moment away is waited for":   {ctx: context.Background(), start: now.Add(10 * time.Millisecond), wantWords: "to start (--start)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out strings.Builder
			err := WaitForStart(tc.ctx, &out, tc.start, now)
			if (err != nil) != tc.wantErr || (err != nil && !strings.Contains(err.Error(), "nothing was changed")) {
				t.Errorf("err = %v, want an error: %v", err, tc.wantErr)
			}
			if !strings.Contains(out.String(), tc.wantWords) || (tc.wantWords == "" && out.Len() > 0) {
				t.Errorf("output %q, want %q", out.String(), tc.wantWords)
			}
		})
	}
}
