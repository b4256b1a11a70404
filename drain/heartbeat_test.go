package drain

import (
	"context"
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
