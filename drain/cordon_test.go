package drain

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
)

// A multi-node drain cordons every node before any drain starts, a few patches at a time
// (not one after the other, nor all at once), and says the cordons in plan order however
// the answers come back.
func TestCordonsGoOutTogetherAndAreSaidInPlanOrder(t *testing.T) {
	const nodes = 20
	objs, names := testNodes("n%02d", nodes)
	var inFlight, peak, patches atomic.Int32
	// The fake clientset answers one call at a time: the wait is outside it.
	client := slowPatches{Interface: kubefake.New(objs...), before: func(types.PatchType) {
		n := inFlight.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		// Later nodes answer sooner: the answers come back out of plan order.
		time.Sleep(time.Duration(2*(nodes-patches.Add(1))) * time.Millisecond)
		inFlight.Add(-1)
	}}
	events := make(chan event.Event, 1000)
	eng, err := NewEngine(Config{Client: client, Events: events, Settings: Settings{MaxParallelNodes: nodes}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Run(context.Background(), names); err != nil {
		t.Fatal(err)
	}
	close(events)
	var cordoned []string
	drainedBeforeLastCordon := false
	for ev := range events {
		switch ev.Type {
		case event.EventNodeCordoned:
			cordoned = append(cordoned, ev.Node)
		case event.EventNodeDrained:
			drainedBeforeLastCordon = drainedBeforeLastCordon || len(cordoned) < nodes
		}
	}
	if fmt.Sprint(cordoned) != fmt.Sprint(names) {
		t.Errorf("cordons said in order %v, want plan order %v", cordoned, names)
	}
	if drainedBeforeLastCordon {
		t.Error("a node was drained before every node was cordoned")
	}
	if p := peak.Load(); p < 2 || p > cordonsAtOnce {
		t.Errorf("%d cordon patches in flight at most, want between 2 and %d", p, cordonsAtOnce)
	}
}

// slowPatches calls before, with the patch's type, ahead of every node patch.
type slowPatches struct {
	kubernetes.Interface
	before func(types.PatchType)
}

func (c slowPatches) CoreV1() corev1client.CoreV1Interface {
	return slowCore{CoreV1Interface: c.Interface.CoreV1(), before: c.before}
}

type slowCore struct {
	corev1client.CoreV1Interface
	before func(types.PatchType)
}

func (c slowCore) Nodes() corev1client.NodeInterface {
	return slowNodes{NodeInterface: c.CoreV1Interface.Nodes(), before: c.before}
}

type slowNodes struct {
	corev1client.NodeInterface
	before func(types.PatchType)
}

func (c slowNodes) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*corev1.Node, error) {
	c.before(pt)
	return c.NodeInterface.Patch(ctx, name, pt, data, opts, sub...)
}

// One node's cordon keeps failing transiently (a webhook timing out): the nodes before it
// in plan order are said at once, the ones after it only once it has answered.
func TestCordonsBeforeARetriedOneAreSaid(t *testing.T) {
	objs, names := testNodes("n%02d", 20)
	g := newRig(t, Config{Settings: Settings{MaxParallelNodes: 20}}, objs...)
	g.client.PrependReactor("patch", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.(k8stesting.PatchAction).GetName() == "n10" {
			return true, nil, apierrors.NewInternalError(errors.New("failed calling webhook: context deadline exceeded"))
		}
		return false, nil, nil
	})
	g.start(names...)
	var said []string
	deadline := time.After(3 * time.Second)
loop:
	for {
		select {
		case ev := <-g.events:
			if ev.Type == event.EventNodeCordoned {
				said = append(said, ev.Node)
			}
		case <-deadline:
			break loop
		case <-time.After(20 * time.Millisecond):
			g.clock.Step(time.Second) // n10 retried meanwhile
		}
	}
	if fmt.Sprint(said) != fmt.Sprint(names[:10]) {
		t.Errorf("while n10's cordon is retried, said %v, want %v", said, names[:10])
	}
	g.cancel()
	g.finish()
}
