package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

var (
	shared *cluster.Cluster
	plugin string
)

func TestMain(m *testing.M) { os.Exit(fixture.TestMain(m, &shared, &plugin)) }

// TestSmoke runs the bench's smoke profile (3 + 3 nodes, W1, kwok's instant stages) and
// checks that every figure is produced, the report round-trips as JSON, the timeline
// renders, and the PDB ceiling held. It asserts no timing.
func TestSmoke(t *testing.T) {
	c := cluster.Need(t, shared)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin, err := cluster.Binaries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(ctx, Config{Cluster: c, Plugin: plugin, Kubectl: filepath.Join(bin, "kubectl"), Profile: Profiles["smoke"], Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Failures) > 0 {
		t.Fatalf("PDB ceiling broken: %v", rep.Failures)
	}
	if len(rep.Results) != 2 {
		t.Fatalf("%d results, want ours and kubectl-seq", len(rep.Results))
	}
	for _, r := range rep.Results {
		t.Logf("%s/%s: wall %.2fs limit %.2fs Tc %.2fs evicted %d eviction requests %.0f 429s %.0f client requests %d lag p50 %.1fms p99 %.1fms rss %.0fMiB max unavailable %v",
			r.Phase, r.Tool, r.WallSec, r.LimitSec, r.TcSec, r.Evicted, r.Evictions, r.Refused, r.ClientRequestsTotal, r.LagMedianMs, r.LagP99Ms, r.PeakRSSMiB, r.MaxUnavailable)
		if r.ExitCode != 0 || r.WallSec <= 0 || r.Evicted != 12 || r.Evictions < 12 || r.ClientRequestsTotal == 0 || r.PeakRSSMiB <= 0 {
			t.Errorf("%s: missing figures: %+v", r.Tool, r)
		}
		if r.MaxUnavailable["w1"] > r.Allowed["w1"] || r.Allowed["w1"] != 1 {
			t.Errorf("%s: max unavailable %d over allowed %d", r.Tool, r.MaxUnavailable["w1"], r.Allowed["w1"])
		}
		if len(r.Timeline) == 0 {
			t.Errorf("%s: empty timeline", r.Tool)
		}
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || len(back.Results) != 2 {
		t.Fatalf("the report does not round-trip as JSON: %v", err)
	}
	var img bytes.Buffer
	if err := WriteTimeline(&img, "W1", rep.Results); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(&img); err != nil {
		t.Fatalf("timeline is not a PNG: %v", err)
	}
}
