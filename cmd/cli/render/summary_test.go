package render

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
)

// The pods left on the nodes not drained (given up, failed, timed out) are counted in the
// summary, by node: in the human summary line and in the NDJSON summary's pods_left.
func TestSummaryCountsThePodsLeftByNode(t *testing.T) {
	sum := drain.Summary{NodesDrained: 1, NodesFailed: 1, PodsEvicted: 1, PodsPending: 5, LeftOn: map[string]int{"n2": 2, "n1": 3}}
	tests := map[string]struct {
		print func(w *bytes.Buffer)
		want  string
	}{
		"the human summary line": {
			print: func(w *bytes.Buffer) {
				(&Human{Out: &bytes.Buffer{}, ErrOut: w}).Summary(sum, errors.New("blocked"), 3)
			},
			want: "1 pod(s) evicted, 5 left (n1: 3, n2: 2);",
		},
		"the NDJSON summary": {
			print: func(w *bytes.Buffer) {
				NewNDJSON(w, "test", time.Now, func() int64 { return 0 }).Summary(sum, errors.New("blocked"), 3)
			},
			want: `"pods_pending":5,"pods_left":{"n1":3,"n2":2}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var w bytes.Buffer
			tc.print(&w)
			if !strings.Contains(w.String(), tc.want) {
				t.Errorf("printed\n%s\nwant it to contain %s", w.String(), tc.want)
			}
		})
	}
}
