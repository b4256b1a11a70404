package maintenance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// reconcileT is a Reconciler on a fake client (the CRD's scheme, the status subresource)
// and a fake clientset, with a fake clock, its runs allowed (as Start allows them).
type reconcileT struct {
	r    *Reconciler
	c    client.Client
	kube *fake.Clientset
	clk  *clocktesting.FakeClock
}

var reconcileNow = time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)

func newReconcileT(t *testing.T, objs ...client.Object) *reconcileT {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := crfake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(&v1alpha1.Maintenance{}).Build()
	kube := kubefake.New(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}})
	kube.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
		r.Status.Allowed = true // the run's preflight: every right
		return true, r, nil
	})
	clk := clocktesting.NewFakeClock(reconcileNow)
	r := &Reconciler{Client: c, APIReader: c, Kube: kube, Clock: clk, Logger: klog.Background(), AdmissionWindow: -1}
	r.defaults()
	base, cancel := context.WithCancel(context.Background())
	r.base = base
	t.Cleanup(func() {
		cancel()
		r.wg.Wait()
	})
	return &reconcileT{r: r, c: c, kube: kube, clk: clk}
}

// reconcile reconciles name once.
func (rt *reconcileT) reconcile(t *testing.T, name string) ctrl.Result {
	t.Helper()
	res, err := rt.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: name}})
	if err != nil {
		t.Fatalf("Reconcile %s: %v", name, err)
	}
	return res
}

// get reads name.
func (rt *reconcileT) get(t *testing.T, name string) *v1alpha1.Maintenance {
	t.Helper()
	m := &v1alpha1.Maintenance{}
	if err := rt.c.Get(context.Background(), client.ObjectKey{Name: name}, m); err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	return m
}

// running returns name's run in progress (nil: none).
func (rt *reconcileT) running(name string) *run {
	rt.r.mu.Lock()
	defer rt.r.mu.Unlock()
	return rt.r.runs[name]
}

// waitRun waits until name's run, if any, has ended and made its final write.
func (rt *reconcileT) waitRun(t *testing.T, name string) {
	t.Helper()
	rn := rt.running(name)
	if rn == nil {
		return
	}
	select {
	case <-rn.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the run of %s did not end", name)
	}
}

// gate makes every write of a node (the cordon) wait until the returned func is called.
func (rt *reconcileT) gate() (open func()) {
	ch := make(chan struct{})
	rt.kube.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		<-ch
		return false, nil, nil
	})
	return func() { close(ch) }
}

func cordonOf(name string, nodes ...string) *v1alpha1.Maintenance {
	return &v1alpha1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name + "-uid")},
		Spec: v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionCordon, Nodes: nodes}}
}

// wantPhase checks m's phase and its Progressing condition's status and reason.
func wantPhase(t *testing.T, m *v1alpha1.Maintenance, phase v1alpha1.Phase, progressing metav1.ConditionStatus, reason string) {
	t.Helper()
	if m.Status.Phase != phase {
		t.Errorf("phase %q (%s), want %q", m.Status.Phase, m.Status.Message, phase)
	}
	c := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionProgressing)
	if c == nil || c.Status != progressing || c.Reason != reason {
		t.Errorf("Progressing %+v, want %s with reason %s", c, progressing, reason)
	}
}

func (rt *reconcileT) cordoned(t *testing.T, node string) bool {
	t.Helper()
	n, err := rt.kube.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n.Spec.Unschedulable
}

// A Pending object gets the finalizer, goes Running (its start written before the run
// starts) and ends in the phase of how its run ended.
func TestReconcileRunsToEachEnding(t *testing.T) {
	tests := map[string]struct {
		refuse   error // every node patch answers this
		phase    v1alpha1.Phase
		reason   string
		cordoned bool
	}{
		"the run succeeds: Succeeded, the node cordoned": {nil, v1alpha1.PhaseSucceeded, "Succeeded", true},
		"the run fails: Failed with why":                 {errors.New("the API server refused"), v1alpha1.PhaseFailed, "Failed", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			rt := newReconcileT(t, cordonOf("m1", "n1"))
			if tc.refuse != nil {
				rt.kube.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, tc.refuse })
			}
			open := rt.gate()
			if res := rt.reconcile(t, "m1"); res != (ctrl.Result{}) {
				t.Errorf("start: result %+v, want none", res)
			}
			m := rt.get(t, "m1")
			if !controllerutil.ContainsFinalizer(m, Finalizer) {
				t.Errorf("finalizers %v, want %s", m.Finalizers, Finalizer)
			}
			wantPhase(t, m, v1alpha1.PhaseRunning, metav1.ConditionTrue, "Running")
			if m.Status.StartTime == nil || !m.Status.StartTime.Time.Equal(reconcileNow) {
				t.Errorf("startTime %v, want %v", m.Status.StartTime, reconcileNow)
			}
			if res := rt.reconcile(t, "m1"); res != (ctrl.Result{}) {
				t.Errorf("while running: result %+v, want none", res)
			}
			open()
			rt.waitRun(t, "m1")
			m = rt.get(t, "m1")
			wantPhase(t, m, tc.phase, metav1.ConditionFalse, tc.reason)
			if m.Status.CompletionTime == nil {
				t.Errorf("no completionTime")
			}
			if tc.refuse != nil && m.Status.Message == "" {
				t.Errorf("a failure without a message")
			}
			if got := rt.cordoned(t, "n1"); got != tc.cordoned {
				t.Errorf("n1 cordoned %v, want %v", got, tc.cordoned)
			}
			if res := rt.reconcile(t, "m1"); res != (ctrl.Result{}) || rt.running("m1") != nil {
				t.Errorf("after the end: result %+v, a run %v; want neither", res, rt.running("m1"))
			}
		})
	}
}

// Paused stops the run (its end writes Paused, the nodes stay held); resumed, a new run
// goes on and ends.
func TestReconcilePausesAndResumes(t *testing.T) {
	rt := newReconcileT(t, cordonOf("m1", "n1"))
	open := rt.gate()
	rt.reconcile(t, "m1")
	rn := rt.running("m1")
	if rn == nil {
		t.Fatal("no run started")
	}
	m := rt.get(t, "m1")
	m.Spec.Paused = true
	if err := rt.c.Update(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	opened := openWhenStopped(rt, rn, stopPaused, open) // the run waits on its cordon until the pause has cancelled it
	if res := rt.reconcile(t, "m1"); res != (ctrl.Result{}) {
		t.Errorf("pause: result %+v, want none", res)
	}
	<-opened // it stopped the run, so its helper ended
	m = rt.get(t, "m1")
	wantPhase(t, m, v1alpha1.PhasePaused, metav1.ConditionFalse, "Paused")
	if rt.running("m1") != nil {
		t.Errorf("a run after the pause")
	}
	rt.r.mu.Lock()
	kept, held := rt.r.kept["m1"] != nil, rt.r.holder["n1"]
	rt.r.mu.Unlock()
	if !kept || held != "m1" {
		t.Errorf("paused: kept %v, n1 held by %q; want kept and held by m1", kept, held)
	}
	if res := rt.reconcile(t, "m1"); res != (ctrl.Result{}) || rt.get(t, "m1").Status.Phase != v1alpha1.PhasePaused {
		t.Errorf("paused again: result %+v, phase %s", res, rt.get(t, "m1").Status.Phase)
	}

	m.Spec.Paused = false
	if err := rt.c.Update(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	rt.reconcile(t, "m1")
	wantPhase(t, rt.get(t, "m1"), v1alpha1.PhaseRunning, metav1.ConditionTrue, "Running")
	rt.waitRun(t, "m1")
	wantPhase(t, rt.get(t, "m1"), v1alpha1.PhaseSucceeded, metav1.ConditionFalse, "Succeeded")
	rt.r.mu.Lock()
	kept = rt.r.kept["m1"] != nil
	rt.r.mu.Unlock()
	if kept || !rt.cordoned(t, "n1") {
		t.Errorf("resumed: kept %v, n1 cordoned %v; want no keeper and n1 cordoned", kept, rt.cordoned(t, "n1"))
	}
}

// The objects that do not start: each is written as what it waits for or why it ends,
// and comes back when it should.
func TestReconcileObjectsThatDoNotStart(t *testing.T) {
	opens := reconcileNow.Add(time.Hour)
	scheduled := cordonOf("m1", "n1")
	scheduled.Spec.Window = &v1alpha1.Window{Start: &metav1.Time{Time: opens}}
	bad := cordonOf("m1", "Bad_Name")
	other := cordonOf("other", "n1", "n2")
	other.Status = v1alpha1.MaintenanceStatus{Phase: v1alpha1.PhaseRunning,
		Nodes: []v1alpha1.NodeStatus{{Name: "n1", State: NodeDraining}, {Name: "n2", State: NodePending}}}
	tests := map[string]struct {
		objs      []client.Object
		result    ctrl.Result
		phase     v1alpha1.Phase
		condition string // the condition True or False with reason
		status    metav1.ConditionStatus
		reason    string
		message   string
	}{
		"a window that opens later: Scheduled until it opens": {
			objs: []client.Object{scheduled}, result: ctrl.Result{RequeueAfter: time.Hour}, phase: v1alpha1.PhaseScheduled,
			condition: v1alpha1.ConditionProgressing, status: metav1.ConditionFalse, reason: reasonScheduled,
			message: "scheduled: the window opens at 2026-11-28T11:00:00Z"},
		"nodes another maintenance holds: waits for it": {
			objs: []client.Object{cordonOf("m1", "n2", "n1"), other, recorded("n1", "other"), recorded("n2", "other")}, result: ctrl.Result{RequeueAfter: waitRetry}, phase: v1alpha1.PhasePending,
			condition: v1alpha1.ConditionWaitingForNodes, status: metav1.ConditionTrue, reason: "HeldByAnother",
			message: "waiting for maintenance/other, which holds node(s) n2, n1"}, // in m1's order
		"a bad object: Failed, Invalid, saying why": {
			objs: []client.Object{bad}, result: ctrl.Result{}, phase: v1alpha1.PhaseFailed,
			condition: v1alpha1.ConditionProgressing, status: metav1.ConditionFalse, reason: "Invalid",
			message: `spec.nodes[0]: "Bad_Name" is not a node name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			rt := newReconcileT(t, tc.objs...)
			if res := rt.reconcile(t, "m1"); res != tc.result {
				t.Errorf("result %+v, want %+v", res, tc.result)
			}
			if rt.running("m1") != nil {
				t.Errorf("a run started")
			}
			m := rt.get(t, "m1")
			if m.Status.Phase != tc.phase || m.Status.Message != tc.message {
				t.Errorf("phase %q, message %q; want %q, %q", m.Status.Phase, m.Status.Message, tc.phase, tc.message)
			}
			c := meta.FindStatusCondition(m.Status.Conditions, tc.condition)
			if c == nil || c.Status != tc.status || c.Reason != tc.reason || c.Message != tc.message {
				t.Errorf("%s %+v, want %s %s %q", tc.condition, c, tc.status, tc.reason, tc.message)
			}
			if rt.cordoned(t, "n1") {
				t.Errorf("n1 cordoned")
			}
		})
	}
}

// Before Start allows runs, an object comes back a second later, unchanged.
func TestReconcileBeforeStartComesBack(t *testing.T) {
	rt := newReconcileT(t, cordonOf("m1", "n1"))
	rt.r.base = nil
	if res := rt.reconcile(t, "m1"); res != (ctrl.Result{RequeueAfter: time.Second}) {
		t.Errorf("result %+v, want RequeueAfter 1s", res)
	}
	if m := rt.get(t, "m1"); m.Status.Phase != "" || rt.running("m1") != nil {
		t.Errorf("phase %q, run %v; want neither", m.Status.Phase, rt.running("m1"))
	}
}

// A deleted object's run stops (its counts written, the phase kept) and the finalizer
// goes, so the object goes.
func TestReconcileDeletedStopsTheRunAndLetsGo(t *testing.T) {
	rt := newReconcileT(t, cordonOf("m1", "n1"))
	open := rt.gate()
	rt.reconcile(t, "m1")
	rn := rt.running("m1")
	if rn == nil {
		t.Fatal("no run started")
	}
	if err := rt.c.Delete(context.Background(), rt.get(t, "m1")); err != nil {
		t.Fatal(err)
	}
	opened := openWhenStopped(rt, rn, stopDeleted, open)
	if res := rt.reconcile(t, "m1"); res != (ctrl.Result{}) {
		t.Errorf("delete: result %+v, want none", res)
	}
	<-opened // it stopped the run, so its helper ended
	err := rt.c.Get(context.Background(), client.ObjectKey{Name: "m1"}, &v1alpha1.Maintenance{})
	if err == nil || !isNotFound(err) {
		t.Errorf("after the finalizer: get %v, want not found", err)
	}
	rt.r.mu.Lock()
	runs, holder := len(rt.r.runs), len(rt.r.holder)
	rt.r.mu.Unlock()
	if runs != 0 || holder != 0 {
		t.Errorf("%d run(s), %d node(s) held; want none", runs, holder)
	}
	if res := rt.reconcile(t, "m1"); res != (ctrl.Result{}) {
		t.Errorf("gone: result %+v, want none", res)
	}
}

func isNotFound(err error) bool { return client.IgnoreNotFound(err) == nil }

// Which ending a run's result is decides its final write.
func TestRunResultEnding(t *testing.T) {
	closes := reconcileNow
	stopAt := windowRun{closes: closes, stop: true}
	tests := map[string]struct {
		res  runResult
		want ending
	}{
		"Run returned on its own":              {runResult{}, endFinished},
		"Run failed on its own":                {runResult{err: errors.New("x")}, endFinished},
		"paused":                               {runResult{stop: stopPaused}, endPaused},
		"paused while the manager stops":       {runResult{stop: stopPaused, shutdown: true, leaseLost: true}, endPaused},
		"a Stop window closed":                 {runResult{stop: stopWindow, win: stopAt}, endWindow},
		"deleted":                              {runResult{stop: stopDeleted}, endStopped},
		"deleted while the Lease is lost":      {runResult{stop: stopDeleted, shutdown: true, leaseLost: true}, endStopped},
		"a clean shutdown (SIGTERM)":           {runResult{shutdown: true}, endStopped},
		"the Lease lost":                       {runResult{shutdown: true, leaseLost: true}, endLeaseLost},
		"a window closing as the manager ends": {runResult{stop: stopWindow, win: stopAt, shutdown: true}, endStopped},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.res.ending(); got != tc.want {
				t.Errorf("ending %d, want %d", got, tc.want)
			}
		})
	}
}

// openWhenStopped calls open once rn's stop reason is why (the run waits on its node
// until the Reconcile under test stopped it); the channel closes when it did.
func openWhenStopped(rt *reconcileT, rn *run, why string, open func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			rt.r.mu.Lock()
			stopped := rn.stop == why
			rt.r.mu.Unlock()
			if stopped {
				open()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	return done
}

// recorded is node name with the record of maintenance holder's run (noderecord), as its
// run writes it at the cordon.
func recorded(name, holder string) *corev1.Node {
	run := noderecord.ForMaintenance(holder, "")
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
		noderecord.AnnotationRun:     fmt.Sprintf(`{"id":%q}`, run.ID),
		noderecord.AnnotationCommand: run.Command,
	}}}
}

// Who holds a node is what its record says, while the Maintenance it names runs or is
// paused: not a record a finished or deleted object left, not the object's own.
func TestHeldByReadsTheNodeRecords(t *testing.T) {
	withPhase := func(name string, p v1alpha1.Phase) *v1alpha1.Maintenance {
		m := cordonOf(name, "n1", "n2")
		m.Status.Phase = p
		return m
	}
	tests := map[string]struct {
		objs  []client.Object
		other string
		held  []string
	}{
		"a running maintenance's records":  {[]client.Object{withPhase("other", v1alpha1.PhaseRunning), recorded("n1", "other"), recorded("n2", "other")}, "other", []string{"n1", "n2"}},
		"a paused maintenance's record":    {[]client.Object{withPhase("other", v1alpha1.PhasePaused), recorded("n2", "other")}, "other", []string{"n2"}},
		"a succeeded maintenance's record": {[]client.Object{withPhase("other", v1alpha1.PhaseSucceeded), recorded("n1", "other")}, "", nil},
		"a scheduled maintenance's record": {[]client.Object{withPhase("other", v1alpha1.PhaseScheduled), recorded("n1", "other")}, "", nil},
		"a deleted maintenance's record":   {[]client.Object{recorded("n1", "gone")}, "", nil},
		"its own record":                   {[]client.Object{withPhase("m1", v1alpha1.PhaseRunning), recorded("n1", "m1")}, "", nil},
		"no record, the other runs on n3":  {[]client.Object{withPhase("other", v1alpha1.PhaseRunning), recorded("n3", "other"), recorded("n1", "")}, "", nil},
		"two holders: the first by name":   {[]client.Object{withPhase("b", v1alpha1.PhaseRunning), withPhase("a", v1alpha1.PhaseRunning), recorded("n1", "b"), recorded("n2", "a")}, "a", []string{"n2"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			rt := newReconcileT(t, tc.objs...)
			other, held, err := rt.r.heldBy(context.Background(), "m1", []string{"n1", "n2"})
			if err != nil || other != tc.other || !slices.Equal(held, tc.held) {
				t.Errorf("heldBy = %q %v %v, want %q %v", other, held, err, tc.other, tc.held)
			}
		})
	}
}

// staleCache is a cache that has not seen the object's newest writes: it gives old.
type staleCache struct {
	client.Client
	old *v1alpha1.Maintenance
}

func (s staleCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if m, ok := obj.(*v1alpha1.Maintenance); ok && key.Name == s.old.Name {
		s.old.DeepCopyInto(m)
		return nil
	}
	return s.Client.Get(ctx, key, obj, opts...)
}

// A run that ended at once wrote its end before the cache saw it: an event of an older
// version (the finalizer's, the Running write's) must not start the object again (seen
// on the real cluster: a Blocked object ran four times in 350 ms).
func TestReconcileFromAStaleCacheStartsNothing(t *testing.T) {
	obj := cordonOf("m1", "n1")
	obj.Finalizers = []string{Finalizer}
	rt := newReconcileT(t, obj)
	old := rt.get(t, "m1")
	m := old.DeepCopy()
	m.Status.Phase = v1alpha1.PhaseBlocked
	if err := rt.c.Status().Update(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	rt.r.Client = staleCache{Client: rt.c, old: old}
	if res := rt.reconcile(t, "m1"); res != (ctrl.Result{}) {
		t.Errorf("result %+v, want none (the newer version's event calls again)", res)
	}
	if rt.running("m1") != nil || rt.cordoned(t, "n1") {
		t.Errorf("a run started from the stale copy")
	}
	if got := rt.get(t, "m1"); got.Status.Phase != v1alpha1.PhaseBlocked {
		t.Errorf("phase %s, want Blocked left as it was", got.Status.Phase)
	}
}

// starts counts the runs started (an Observer).
type starts struct {
	nopObserver
	n atomic.Int32
}

func (s *starts) RunStarted(string) { s.n.Add(1) }

// A Reconcile while a finished run's end is being written (an event of its progress)
// sees the run, not an object to start again (seen on the real cluster: a Blocked
// object ran five times in 600 ms).
func TestReconcileWhileTheEndIsWrittenStartsNothing(t *testing.T) {
	obj := cordonOf("m1", "n1")
	obj.Finalizers = []string{Finalizer}
	rt := newReconcileT(t, obj)
	obs := &starts{}
	rt.r.Observer = obs
	ending, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	rt.r.Client = interceptor.NewClient(rt.c.(client.WithWatch), interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, o client.Object, opts ...client.SubResourceUpdateOption) error {
			if m, ok := o.(*v1alpha1.Maintenance); ok && m.Status.Phase.Done() {
				once.Do(func() { close(ending) })
				<-release
			}
			return c.SubResource(sub).Update(ctx, o, opts...)
		},
	})
	rt.reconcile(t, "m1")
	<-ending // the run finished; its end waits to be written
	if res := rt.reconcile(t, "m1"); res.RequeueAfter == 0 {
		t.Errorf("result %+v while the end is written, want to come back (its write may change nothing)", res)
	}
	close(release)
	rt.waitRun(t, "m1")
	rt.reconcile(t, "m1")
	if n := obs.n.Load(); n != 1 {
		t.Errorf("%d runs started, want 1", n)
	}
	if m := rt.get(t, "m1"); m.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Errorf("phase %s, want Succeeded", m.Status.Phase)
	}
}
