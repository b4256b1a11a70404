package drain

import (
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
)

// newConcernRun is a run that is never started, over plan and a store of budgets, for
// the tests of one concern's methods: no informer, no worker, no outbox.
func newConcernRun(t *testing.T, cfg Config, plan *event.Plan) (*run, *testingclock.FakeClock) {
	t.Helper()
	clock := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
	cfg.Client, cfg.Clock = kubefake.New(), clock
	if cfg.Events == nil {
		cfg.Events = make(chan event.Event, 100)
	}
	eng, err := NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if plan == nil {
		plan = &event.Plan{}
	}
	r := newRun(eng, &preflight{plan: plan})
	r.book.pdbs = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	return r, clock
}
