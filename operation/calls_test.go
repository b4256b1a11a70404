package operation

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
)

// beforeCordon records the reads of nodes (GET and LIST; the engine's informers' LISTs
// too) the clientset serves until the first cordon (a node patch that sets
// spec.unschedulable).
type beforeCordon struct {
	mu       sync.Mutex
	cordoned bool
	gets     map[string]int // node name → GETs
	lists    int
}

func countBeforeCordon(cs *fake.Clientset) *beforeCordon {
	b := &beforeCordon{gets: map[string]int{}}
	cs.PrependReactor("*", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.cordoned {
			return false, nil, nil
		}
		switch a.GetVerb() {
		case "get":
			b.gets[a.(k8stesting.GetAction).GetName()]++
		case "list":
			b.lists++
		case "patch":
			b.cordoned = strings.Contains(string(a.(k8stesting.PatchAction).GetPatch()), `"unschedulable":true`)
		}
		return false, nil, nil
	})
	return b
}

func (b *beforeCordon) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return fmt.Sprintf("GETs %v, LISTs %d", b.gets, b.lists)
}

// maxGets is the most GETs of one node.
func (b *beforeCordon) maxGets() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := 0
	for _, n := range b.gets {
		m = max(m, n)
	}
	return m
}

// Issue 32, test 4: the reads of nodes before the first cordon, per path: a CLI drain
// resolves each named node once; a server-side drain (the controller's Resolve carried
// into Run in Request.Resolved) reads them once in all; a move once before its first
// cordon. The figures are logged for the closing note.
func TestNodeReadsBeforeTheFirstCordon(t *testing.T) {
	cases := map[string]struct {
		req      Request
		resolve  bool // the controller's way: Resolve first, then Run with Resolved
		plan     bool // pool move's way: Plan first, then Run with its Moves and Resolved
		maxGets  int  // the most GETs of one node before the first cordon
		maxLists int
	}{
		// The resolution's GET of each node, and up to two LISTs of the engine (the
		// plan's, and the watch of the nodes that leave the run, which starts beside the
		// first cordon: its LIST lands before or after it).
		"a CLI drain of two named nodes": {req: Request{Action: Drain, Nodes: []string{"b1", "b2"}}, maxGets: 1, maxLists: 2},
		"a server-side drain":            {req: Request{Action: Drain, Nodes: []string{"b1", "b2"}}, resolve: true, maxGets: 1, maxLists: 2},
		"a server-side drain by label":   {req: Request{Action: Drain, Selector: "tier=blue"}, resolve: true, maxGets: 0, maxLists: 3},
		// The resolution's GET, which the move plans from, and the first node's own read
		// for its conditional cordon (a rolling run cordons each node as it starts); the
		// LISTs: the plan's, the pools' window's, and the node watch's (before or after).
		"a move of two nodes": {req: Request{Action: Move, Nodes: []string{"b1", "b2"}, To: "green"}, maxGets: 2, maxLists: 3},
		// pool move and the dashboard: Plan, then Run with the plan and its resolution
		// (Request.Moves, Request.Resolved): the same reads as a move run at once.
		"a planned move of two nodes": {req: Request{Action: Move, Nodes: []string{"b1", "b2"}, To: "green"}, plan: true, maxGets: 2, maxLists: 3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			blue := map[string]string{nodepool.RoleLabel("blue"): "", "tier": "blue"}
			op := cluster(t, node("b1", false, blue), node("b2", false, blue), pod("p1", "b1"), pod("p2", "b2"))
			counts := countBeforeCordon(op.Kube.(*fake.Clientset))
			req := tc.req
			req.Drain = drain.Settings{IgnoreDaemonSets: true, GracePeriodSeconds: -1}
			ctx := context.Background()
			if tc.resolve {
				rz, err := op.Resolve(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				req.Resolved = rz
			}
			if tc.plan {
				p, err := op.Plan(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				req.Moves, req.Resolved = p.Move, p.Resolved
			}
			if _, _, err := run(t, op, ctx, req); err != nil {
				t.Fatal(err)
			}
			t.Logf("FIGURE before the first cordon: %s", counts)
			if g := counts.maxGets(); g > tc.maxGets {
				t.Errorf("a node was read %d times before the first cordon (%s), want at most %d", g, counts, tc.maxGets)
			}
			if counts.lists > tc.maxLists {
				t.Errorf("%d LISTs of nodes before the first cordon, want at most %d", counts.lists, tc.maxLists)
			}
		})
	}
}
