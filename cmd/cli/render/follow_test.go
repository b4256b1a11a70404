package render

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// What a follow says on stderr while it waits, in the words the follow command prints.
func TestFollowSays(t *testing.T) {
	tests := map[string]struct {
		say  func(f *Follow)
		want string
	}{
		"waiting":     {func(f *Follow) { f.Waiting("node n1 is held by run abc") }, "waiting: node n1 is held by run abc\n"},
		"unreachable": {func(f *Follow) { f.Unreachable(errors.New("connection refused")) }, "Warning: cannot reach the API server (connection refused); maintenance/m1 runs on in the cluster, following it again when it answers\n"},
		"reachable":   {func(f *Follow) { f.Reachable(1500 * time.Millisecond) }, "the API server answers again after 2s; following maintenance/m1\n"},
		"detached":    {func(f *Follow) { f.Detached() }, "detached: maintenance/m1 runs on in the cluster; follow it again with `kubectl maintenance follow m1`, cancel it with `kubectl maintenance cancel m1`\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out, errOut strings.Builder
			tc.say(&Follow{Out: &out, ErrOut: &errOut, Name: "m1"})
			if errOut.String() != tc.want || out.Len() != 0 {
				t.Errorf("stderr %q (stdout %q), want %q", errOut.String(), out.String(), tc.want)
			}
		})
	}
}
