package bench

import (
	"context"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// On the real control plane: kube-controller-manager's metrics answer the scraper, and a
// new budget makes the disruption controller's queue count a sync and time spent on it.
func TestKCMScraperReadsTheDisruptionQueue(t *testing.T) {
	c := cluster.Need(t, shared)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := newKCMScraper(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	before, err := s.disruption(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := fixture.Namespace(ctx, c.Client, "kcm-metrics")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.PDB(ctx, c.Client, ns, "web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}); err != nil {
		t.Fatal(err)
	}
	for {
		q, err := s.disruption(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if q.Syncs > before.Syncs {
			if q.BusySec <= before.BusySec {
				t.Errorf("disruption queue %+v after %+v: a sync that took no time", q, before)
			}
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the disruption controller's queue counted no sync of a new budget in a minute (%+v)", q)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func TestParseQueueBusy(t *testing.T) {
	text := []byte(`# HELP workqueue_work_duration_seconds [ALPHA] How long in seconds processing an item from workqueue takes.
workqueue_work_duration_seconds_bucket{name="disruption",le="1e-08"} 0
workqueue_work_duration_seconds_sum{name="disruption"} 12.5
workqueue_work_duration_seconds_count{name="disruption"} 5000
workqueue_work_duration_seconds_sum{name="disruption_recheck"} 1
workqueue_work_duration_seconds_count{name="disruption_recheck"} 7
workqueue_depth{name="disruption"} 3
`)
	if got, want := parseQueueBusy(text, "disruption"), (queueBusy{Syncs: 5000, BusySec: 12.5}); got != want {
		t.Errorf("parseQueueBusy = %+v, want %+v", got, want)
	}
	if got := parseQueueBusy(text, "deployment"); got != (queueBusy{}) {
		t.Errorf("parseQueueBusy of an absent queue = %+v, want zero", got)
	}
}
