package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/bench/promeval"
	"github.com/kubectl-maintenance/kubectl-maintenance/metrics"
)

// The metrics a run served, scraped every second: F1's (drain --metrics-bind-address)
// and F5's (the controller's endpoint) timelines, and at the end of F5 each family of
// the metrics reference with its example query evaluated on the scrapes (package
// promeval): the closing note's "one query per family with its value".

// MetricsQuery is one family's example query (metrics.Catalog) and its value at the
// run's last scrape.
type MetricsQuery struct {
	Family string `json:"family"`
	Query  string `json:"query"`
	// Value is the result as PromQL prints it ("empty": no series), or the error.
	Value string `json:"value"`
	// SpanSec is the time the scrapes a range function read cover: the query's window
	// cut to the run's scrapes (0: no range function).
	SpanSec float64 `json:"span_seconds,omitempty"`
}

const metricsPrefix = "kubectl_maintenance_"

// scrape reads a metrics endpoint's text.
func scrape(addr string) ([]byte, error) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: %s", addr, resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", addr, err)
	}
	return b, nil
}

// scrapeSum reads a metrics endpoint and sums the samples of family whose labels
// include match (name="value" pairs); ok is false when the family is absent.
func scrapeSum(addr, family string, match ...string) (sum float64, ok bool, err error) {
	b, err := scrape(addr)
	if err != nil {
		return 0, false, err
	}
	s, err := promeval.Parse(b, time.Now(), family)
	if err != nil {
		return 0, false, fmt.Errorf("scrape %s: %w", addr, err)
	}
	sum, ok = sumOf(s, family, match...)
	return sum, ok, nil
}

// sumOf sums the samples of family in s whose labels include match.
func sumOf(s promeval.Scrape, family string, match ...string) (sum float64, ok bool) {
next:
	for _, ser := range s.Series {
		if ser.Name != family {
			continue
		}
		for _, m := range match {
			name, val, _ := strings.Cut(m, "=")
			if fmt.Sprintf("%q", ser.Labels[name]) != val {
				continue next
			}
		}
		sum, ok = sum+ser.Value, true
	}
	return sum, ok
}

// metricsSampler scrapes a metrics endpoint every second and keeps its kubectl_maintenance_
// samples and its last text; a scrape that fails (not yet serving) is skipped.
type metricsSampler struct {
	addr    string
	start   time.Time
	mu      sync.Mutex
	scrapes []promeval.Scrape
	last    []byte
	done    chan struct{}
}

func sampleMetrics(ctx context.Context, addr string, start time.Time) (*metricsSampler, func()) {
	s := &metricsSampler{addr: addr, start: start, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer close(s.done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			_ = s.scrapeOnce()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s, func() { cancel(); <-s.done }
}

// scrapeOnce reads the endpoint once and keeps the scrape.
func (s *metricsSampler) scrapeOnce() error {
	b, err := scrape(s.addr)
	if err != nil {
		return err
	}
	sc, err := promeval.Parse(b, time.Now(), metricsPrefix)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.scrapes, s.last = append(s.scrapes, sc), b
	s.mu.Unlock()
	return nil
}

// timeline is the samples as (seconds since start, evictions accepted).
func (s *metricsSampler) timeline() [][2]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][2]float64, 0, len(s.scrapes))
	for _, sc := range s.scrapes {
		acc, _ := sumOf(sc, metrics.EvictionsTotal, `outcome="accepted"`)
		out = append(out, [2]float64{sc.At.Sub(s.start).Seconds(), acc})
	}
	return out
}

// queries evaluates every family's example query (metrics.Catalog) at the last scrape.
func (s *metricsSampler) queries() []MetricsQuery {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []MetricsQuery
	for _, f := range metrics.Catalog() {
		q := MetricsQuery{Family: f.Name, Query: f.Query}
		res, err := promeval.Eval(f.Query, s.scrapes)
		if err != nil {
			q.Value = "error: " + err.Error()
		} else {
			q.Value, q.SpanSec = res.String(), res.Span.Seconds()
		}
		out = append(out, q)
	}
	return out
}

// keepLast writes the last scrape's whole text to dir/name ("" dir: nothing).
func (s *metricsSampler) keepLast(dir, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if dir == "" || s.last == nil {
		return nil
	}
	if err := os.WriteFile(filepath.Join(dir, name), s.last, 0o644); err != nil {
		return fmt.Errorf("keep the last scrape: %w", err)
	}
	return nil
}
