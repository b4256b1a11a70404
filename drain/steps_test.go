package drain

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
)

// stepLog is a NodeSteps that records its calls with whether the node was cordoned, and
// fails After for the nodes in fail with a verdict of its own (not an API error).
type stepLog struct {
	g    *rig
	fail map[string]bool

	mu    sync.Mutex
	calls []string
}

type verdict struct{}

func (verdict) Error() string { return "the step's own verdict" }
func (verdict) Blocked() bool { return true }
func (s *stepLog) cordoned(node string) string {
	n, err := s.g.client.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	if err != nil || !n.Spec.Unschedulable {
		return "schedulable"
	}
	return "cordoned"
}

func (s *stepLog) Before(_ context.Context, node string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "before "+node+" "+s.cordoned(node))
	return nil
}

func (s *stepLog) After(_ context.Context, node string) ([]event.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "after "+node+" "+s.cordoned(node))
	if s.fail[node] {
		return nil, verdict{}
	}
	return []event.Event{{Type: event.EventNodeMoved, Node: node}}, nil
}

// A rolling drain's node steps run around each node: Before once it is admitted and
// before its cordon, After once it is drained and before the next node starts, its
// events right after node.drained. A step's own verdict fails the node (not retried) and
// the run's error wraps it, so that its kind reaches the exit code.
func TestNodeStepsRunAroundEachNode(t *testing.T) {
	tests := []struct {
		name  string
		fail  map[string]bool
		calls []string
		moved []string
	}{
		{name: "both nodes",
			calls: []string{"before n1 schedulable", "after n1 cordoned", "before n2 schedulable", "after n2 cordoned"},
			moved: []string{"n1", "n2"}},
		{name: "the step refuses n1", fail: map[string]bool{"n1": true},
			calls: []string{"before n1 schedulable", "after n1 cordoned", "before n2 schedulable", "after n2 cordoned"},
			moved: []string{"n2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			adm := &admitLog{}
			steps := &stepLog{fail: tt.fail}
			g := newRig(t, Config{Settings: Settings{MaxParallelNodes: 1}, Rolling: adm, Steps: steps}, testNode("n1"), testNode("n2"))
			adm.client, steps.g = g.client, g
			g.start("n1", "n2")
			res := <-g.done
			if !slices.Equal(steps.calls, tt.calls) {
				t.Errorf("steps\n got %q\nwant %q", steps.calls, tt.calls)
			}
			var v verdict
			if tt.fail != nil && !errors.As(res.err, &v) {
				t.Errorf("run: %v, want it to wrap the step's verdict", res.err)
			}
			if tt.fail == nil && res.err != nil {
				t.Errorf("run: %v", res.err)
			}
			var moved []string
			last := ""
			for ev := range g.events {
				if ev.Type == event.EventNodeMoved {
					moved = append(moved, ev.Node)
					if last != string(event.EventNodeDrained)+" "+ev.Node {
						t.Errorf("node.moved for %s follows %q, want its node.drained", ev.Node, last)
					}
				}
				last = string(ev.Type) + " " + ev.Node
			}
			if !slices.Equal(moved, tt.moved) {
				t.Errorf("moved %v, want %v", moved, tt.moved)
			}
		})
	}
}

// Steps without a rolling drain is a configuration error.
func TestNodeStepsNeedARollingDrain(t *testing.T) {
	_, err := NewEngine(Config{Client: kubefake.New(), Events: make(chan event.Event), Steps: &stepLog{}})
	if err == nil {
		t.Fatal("NewEngine accepted steps without a rolling drain")
	}
}
