package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// drainFlags are the flags of both drains of the side by side: the ones an SRE gives
// kubectl drain for such a workload.
var drainFlags = []string{"--ignore-daemonsets", "--delete-emptydir-data"}

// sideBySide is what the side by side measured.
type sideBySide struct {
	// line is the one line that compares the two wall times.
	line string
	// ours and kubectl are the two drains.
	ours, kubectl drainRun
}

// drainRun is one drain of the side by side.
type drainRun struct {
	elapsed time.Duration
	// pods is how many pods (DaemonSet pods aside) the drained nodes held before.
	pods int
	// accepted and refused count the Eviction API requests the API server answered 201
	// and 429 during the drain (its apiserver_request_total).
	accepted, refused float64
}

// sideBySide drains one twin's pair of nodes with the plugin and the other's with the
// pinned kubectl drain (one command for both nodes), and prints both wall times on one line.
func (d *demo) sideBySide(ctx context.Context) error {
	d.say("the side by side: the same workload twice, in namespaces twin-a and twin-b (Deployments web 6 and api 4 with emptyDir data, StatefulSet db 3, one PDB each, DaemonSet agent), each kept on its own pair of nodes by label twin=a or twin=b, with a spare node for the replacements")
	began := time.Now()
	setupCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	twins, err := fixture.DemoTwins(setupCtx, d.c.Client)
	if err != nil {
		return err
	}
	d.say("twins ready in %s", time.Since(began).Round(time.Millisecond))
	ours, err := d.timedDrain(ctx, twins[0], step{args: append(append([]string{"drain"}, twins[0].Nodes...), drainFlags...), json: true,
		note: "our drain of twin-a's pair: both nodes at once, every eviction as soon as its budget's status allows it"})
	if err != nil {
		return err
	}
	theirs, err := d.timedDrain(ctx, twins[1], step{args: append(append([]string{"drain"}, twins[1].Nodes...), drainFlags...), kubectl: true,
		note: "kubectl drain (the pinned v1.36.3) of twin-b's pair: one node after the other, a refused eviction retried every 5 s"})
	if err != nil {
		return err
	}
	d.side = sideBySide{ours: ours, kubectl: theirs,
		line: fmt.Sprintf("side by side: kubectl-maintenance %.1fs, kubectl drain %.1fs (same workload on twin nodes): %.1fx",
			ours.elapsed.Seconds(), theirs.elapsed.Seconds(), theirs.elapsed.Seconds()/ours.elapsed.Seconds())}
	fmt.Fprintf(d.out, "\n%s\n", d.side.line)
	return nil
}

// timedDrain runs one drain of the side by side and counts what it asked of the Eviction
// API; every pod of the twin's pair must have gone through it.
func (d *demo) timedDrain(ctx context.Context, twin fixture.DemoTwin, s step) (drainRun, error) {
	var run drainRun
	pods, err := d.c.Client.CoreV1().Pods(twin.NS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return run, err
	}
	for _, p := range pods.Items {
		if p.Labels["app"] != "agent" && (p.Spec.NodeName == twin.Nodes[0] || p.Spec.NodeName == twin.Nodes[1]) {
			run.pods++
		}
	}
	accepted, refused, err := d.evictions(ctx)
	if err != nil {
		return run, err
	}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	r, err := d.cmd(cctx, s)
	if err != nil {
		return run, err
	}
	run.elapsed = r.elapsed
	a, rf, err := d.evictions(ctx)
	if err != nil {
		return run, err
	}
	run.accepted, run.refused = a-accepted, rf-refused
	fmt.Fprintf(d.out, "# %s: %d pod(s) on %s; Eviction API: %.0f accepted, %.0f refused (429)\n",
		r.elapsed.Round(100*time.Millisecond), run.pods, strings.Join(twin.Nodes, " and "), run.accepted, run.refused)
	if run.accepted < float64(run.pods) {
		return run, fmt.Errorf("%d pod(s) on %s, only %.0f evictions accepted", run.pods, strings.Join(twin.Nodes, " and "), run.accepted)
	}
	return run, nil
}

// evictions reads the API server's count of eviction requests it accepted (201) and
// refused (429) so far.
func (d *demo) evictions(ctx context.Context) (accepted, refused float64, err error) {
	count := func(code string) (float64, error) {
		return d.c.APIServerMetric(ctx, "apiserver_request_total", map[string]string{"resource": "pods", "subresource": "eviction", "code": code})
	}
	if accepted, err = count("201"); err != nil {
		return 0, 0, err
	}
	refused, err = count("429")
	return accepted, refused, err
}
