package drain

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// A node the run holds (its pod waits on a budget) gets its heartbeat renewed once an
// interval, each time with one JSON patch and no read of the node.
func TestHeartbeatIsOnePatchAnInterval(t *testing.T) {
	g := newRig(t, Config{}, testNode("n1"), podOn("p1", "n1", "u1"), testPDB(0))
	g.start("n1")
	g.next(event.EventEvictionBlocked, 0)
	for i := 1; i <= 2; i++ {
		g.clock.Step(noderecord.HeartbeatInterval)
		want := g.clock.Now().UTC().Format(time.RFC3339)
		deadline := time.Now().Add(5 * time.Second)
		for heartbeats(g) < i && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := heartbeats(g); got != i {
			t.Fatalf("after %d intervals: %d heartbeat patches, want %d", i, got, i)
		}
		n, err := g.client.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := n.Annotations[noderecord.AnnotationHeartbeat]; got != want {
			t.Errorf("heartbeat %q, want %q", got, want)
		}
	}
	gets := 0
	for _, a := range g.client.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "nodes" {
			gets++
		}
	}
	if gets != 2 { // the test's own two reads
		t.Errorf("%d GETs of the node, want only the test's 2: the heartbeat reads nothing", gets)
	}
	g.cancel()
	g.finish()
}

// heartbeats counts the JSON patches of nodes the client sent.
func heartbeats(g *rig) int {
	n := 0
	for _, a := range g.client.Actions() {
		if p, ok := a.(k8stesting.PatchAction); ok && a.GetResource().Resource == "nodes" && p.GetPatchType() == types.JSONPatchType {
			n++
		}
	}
	return n
}

// A run holding many nodes renews their heartbeats several at once: one after the other,
// a round over hundreds of nodes on a loaded API server outlasts the heartbeat's expiry.
func TestHeartbeatsAreRenewedSeveralAtOnce(t *testing.T) {
	const nodes = 3 * heartbeatWorkers
	objs, names := testNodes("n%02d", nodes)
	for i, n := range names {
		objs = append(objs, podOn(fmt.Sprintf("p%02d", i), n, types.UID(fmt.Sprintf("u%02d", i))))
	}
	objs = append(objs, testPDB(0))
	g := newRig(t, Config{Settings: Settings{MaxParallelNodes: nodes}}, objs...)
	var mu sync.Mutex
	inFlight, most, renewed := 0, 0, 0
	// Each renewal waits until heartbeatWorkers are in flight (or a second has passed): one
	// after the other, each would wait the whole second and most would stay 1.
	g.eng.cfg.Client = slowPatches{Interface: g.client, before: func(pt types.PatchType) {
		if pt != types.JSONPatchType {
			return // not a heartbeat renewal (a cordon, a record)
		}
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			mu.Lock()
			enough := most >= heartbeatWorkers
			mu.Unlock()
			if enough {
				break
			}
		}
		mu.Lock()
		inFlight--
		renewed++
		mu.Unlock()
	}}
	g.start(names...)
	for range nodes {
		g.next(event.EventEvictionBlocked, 0)
	}
	g.clock.Step(noderecord.HeartbeatInterval)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		done := renewed
		mu.Unlock()
		if done == nodes {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if renewed != nodes || most != heartbeatWorkers {
		t.Errorf("%d of %d heartbeats renewed, at most %d at once; want all, %d at once", renewed, nodes, most, heartbeatWorkers)
	}
	g.cancel()
	g.finish()
}
