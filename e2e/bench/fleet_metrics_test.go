package bench

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/metrics"
)

// TestSamplerQueries: two scrapes of an endpoint (promeval's testdata, during and at the
// end of a Maintenance) give every family of the reference its query's value at the last
// one, the timeline of evictions accepted, and the last scrape's text on disk.
func TestSamplerQueries(t *testing.T) {
	var texts [][]byte
	for _, f := range []string{"promeval/testdata/start.txt", "promeval/testdata/end.txt"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, b)
	}
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(texts[min(int(n.Add(1))-1, len(texts)-1)])
	}))
	defer srv.Close()
	s := &metricsSampler{addr: strings.TrimPrefix(srv.URL, "http://"), start: time.Now()}
	for range texts {
		if err := s.scrapeOnce(); err != nil {
			t.Fatal(err)
		}
	}
	// The values that do not depend on the time between the two scrapes.
	want := map[string]string{
		metrics.PodsWaiting:         "empty",
		metrics.NodeDrainDuration:   "{} 230.4",
		metrics.RunDuration:         `{phase="Succeeded"} 1`,
		metrics.EvictionRate:        "{} 0.5",
		metrics.EvictionPace:        "empty",
		metrics.DisruptionLag:       "{} 0.8",
		metrics.RunsInProgress:      "{} 0",
		metrics.MaintenancesByPhase: "empty",
		metrics.MaintenanceNodes:    "empty",
	}
	qs := s.queries()
	if len(qs) != len(metrics.Catalog()) {
		t.Fatalf("%d queries, want one for each of the %d families", len(qs), len(metrics.Catalog()))
	}
	for _, q := range qs {
		if strings.HasPrefix(q.Value, "error") || q.Value == "" {
			t.Errorf("%s: %q", q.Family, q.Value)
		}
		if w, ok := want[q.Family]; ok && q.Value != w {
			t.Errorf("%s: %s = %s, want %s", q.Family, q.Query, q.Value, w)
		}
	}
	tl := s.timeline()
	if len(tl) != 2 || tl[0][1] != 400 || tl[1][1] != 1000 {
		t.Errorf("timeline %v, want 400 then 1000 evictions accepted", tl)
	}
	dir := t.TempDir()
	if err := s.keepLast(dir, "F5-metrics.txt"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "F5-metrics.txt")); err != nil || string(b) != string(texts[1]) {
		t.Errorf("the last scrape kept: %v, %d bytes, want the end's %d", err, len(b), len(texts[1]))
	}
}
