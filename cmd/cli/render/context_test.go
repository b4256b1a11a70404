package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// Every NDJSON line, the version and the summary included, names the cluster, so that
// the streams of several clusters can be merged; without a name the field is left out.
func TestNDJSONContextOnEveryLine(t *testing.T) {
	for name, ctx := range map[string]string{"a context": "prod-eu", "no context": ""} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			p := NewNDJSON(&out, "v0.0.0-test", time.Now, func() int64 { return 0 }).SetContext(ctx)
			p.Event(event.Event{Type: event.EventNodeCordoned, Node: "n1"})
			p.Event(event.Event{Type: event.EventNodeDrained, Node: "n1"})
			p.Summary(drain.Summary{}, nil, 0)
			lines := 0
			sc := bufio.NewScanner(&out)
			for sc.Scan() {
				lines++
				var m map[string]any
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
					t.Fatal(err)
				}
				got, has := m["context"]
				if (ctx != "") != has || (has && got != ctx) {
					t.Errorf("line %s: context %v (present %v), want %q", sc.Text(), got, has, ctx)
				}
			}
			if lines != 4 {
				t.Errorf("%d lines, want 4 (version, two events, summary)", lines)
			}
		})
	}
}
