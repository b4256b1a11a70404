package kubeargs

import (
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/exitcode"
)

func TestParseNotAfter(t *testing.T) {
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		in      string
		want    time.Time
		wantErr bool
	}{
		"empty: no deadline":         {"", time.Time{}, false},
		"an RFC 3339 time":           {"2026-11-25T06:00:00Z", time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC), false},
		"an RFC 3339 time with zone": {"2026-11-25T10:00:00+01:00", time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC), false},
		"a duration from now":        {"90m", now.Add(90 * time.Minute), false},
		"a zero duration":            {"0s", time.Time{}, true},
		"words":                      {"after lunch", time.Time{}, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := NotAfter(tc.in, now)
			if (err != nil) != tc.wantErr || !got.Equal(tc.want) {
				t.Errorf("NotAfter(%q) = %s, %v; want %s (error %v)", tc.in, got, err, tc.want, tc.wantErr)
			}
			if err != nil && exitcode.Of(err) != exitcode.Usage {
				t.Errorf("exit code %d, want 2", exitcode.Of(err))
			}
		})
	}
}
