package drain

import (
	"testing"
	"time"
)

// A node this run cordoned counts as just cordoned for freshCordon, and only once.
func TestFastStartJustCordoned(t *testing.T) {
	at := time.Unix(1_000_000, 0)
	for _, tc := range []struct {
		name     string
		cordoned bool
		after    time.Duration
		asked    int // times asked before
		want     bool
	}{
		{name: "cordoned a moment ago", cordoned: true, after: time.Second, want: true},
		{name: "cordoned freshCordon ago: read again", cordoned: true, after: freshCordon},
		{name: "not cordoned by this run", after: time.Second},
		{name: "asked a second time: read again", cordoned: true, after: time.Second, asked: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f fastStart
			if tc.cordoned {
				f.cordoned("n1", at)
			}
			for range tc.asked {
				f.justCordoned("n1", at.Add(tc.after))
			}
			if got := f.justCordoned("n1", at.Add(tc.after)); got != tc.want {
				t.Errorf("justCordoned = %v, want %v", got, tc.want)
			}
		})
	}
}
