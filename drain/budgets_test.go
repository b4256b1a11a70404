package drain

import (
	"slices"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// newTestBook is a budgetBook over an informer store holding pdbs, with no run: the
// methods tested here make no effect.
func newTestBook(t *testing.T, pdbs ...*policyv1.PodDisruptionBudget) *budgetBook {
	t.Helper()
	bk := newBudgetBook(nil)
	bk.pdbs = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range pdbs {
		if err := bk.pdbs.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	return &bk
}

func namedPDB(name string, allowed int32) *policyv1.PodDisruptionBudget {
	p := testPDB(allowed)
	p.Name = name
	return p
}

// The pods a budget's change wakes: as many as it has room for, in (wave, key) order,
// plus every pod waiting on several budgets; all when the budget is gone.
func TestBudgetBookToWake(t *testing.T) {
	for _, tc := range []struct {
		name     string
		allowed  int32
		gone     bool // the budget was deleted
		stale    bool // the watchdog found its status stale
		observed bool // false: the status's observedGeneration lags the spec
		reserved []string
		parked   map[string]int // pod -> wave, waiting on ns/web only
		multi    []string       // pods waiting on ns/web and ns/other
		want     []string
	}{
		{name: "room for two: the two first by wave, then key", allowed: 2, observed: true,
			parked: map[string]int{"ns/c": 0, "ns/b": 1, "ns/a": 1, "ns/d": 0}, want: []string{"ns/c", "ns/d"}},
		{name: "a reservation takes room", allowed: 2, observed: true, reserved: []string{"ns/x"},
			parked: map[string]int{"ns/b": 0, "ns/a": 0}, want: []string{"ns/a"}},
		{name: "no room: only the pods under several budgets", allowed: 0, observed: true,
			parked: map[string]int{"ns/a": 0}, multi: []string{"ns/m"}, want: []string{"ns/m"}},
		{name: "a stale status gives no room", allowed: 3, observed: true, stale: true,
			parked: map[string]int{"ns/a": 0}, want: nil},
		{name: "an unobserved generation gives no room", allowed: 3,
			parked: map[string]int{"ns/a": 0}, want: nil},
		{name: "a budget gone wakes every pod", allowed: 0, gone: true, observed: true,
			parked: map[string]int{"ns/b": 1, "ns/a": 0}, want: []string{"ns/a", "ns/b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			web := namedPDB("web", tc.allowed)
			if !tc.observed {
				web.Generation = 2
			}
			var bk *budgetBook
			if tc.gone {
				bk = newTestBook(t, namedPDB("other", 1))
			} else {
				bk = newTestBook(t, web, namedPDB("other", 1))
			}
			budget := &pdb.Budget{PDB: web}
			for _, key := range tc.reserved {
				bk.reserveLocked("ns/web", &podState{key: key})
			}
			for key, wave := range tc.parked {
				bk.parkOnLocked(&podState{key: key, wave: wave}, []*pdb.Budget{budget})
			}
			for _, key := range tc.multi {
				bk.parkOnLocked(&podState{key: key}, []*pdb.Budget{budget, {PDB: namedPDB("other", 1)}})
			}
			var got []string
			for _, st := range bk.toWakeLocked("ns/web", tc.stale) {
				got = append(got, st.key)
			}
			if tc.gone {
				slices.Sort(got)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("woken %v, want %v", got, tc.want)
			}
		})
	}
}

// Parking, unparking, reserving and releasing keep the book and the pod's own marks
// in step.
func TestBudgetBookBookkeeping(t *testing.T) {
	web, other := &pdb.Budget{PDB: namedPDB("web", 0)}, &pdb.Budget{PDB: namedPDB("other", 0)}
	for _, tc := range []struct {
		name         string
		do           func(bk *budgetBook, st *podState)
		wantParkedOn []string
		wantReserved string
		wantInBook   map[string]bool // pdb key -> the pod is parked there
	}{
		{name: "parked on two budgets", do: func(bk *budgetBook, st *podState) { bk.parkOnLocked(st, []*pdb.Budget{web, other}) },
			wantParkedOn: []string{"ns/web", "ns/other"}, wantInBook: map[string]bool{"ns/web": true, "ns/other": true}},
		{name: "parked again on one: off the other", do: func(bk *budgetBook, st *podState) {
			bk.parkOnLocked(st, []*pdb.Budget{web, other})
			bk.parkOnLocked(st, []*pdb.Budget{other})
		}, wantParkedOn: []string{"ns/other"}, wantInBook: map[string]bool{"ns/web": false, "ns/other": true}},
		{name: "unparked: off every budget", do: func(bk *budgetBook, st *podState) {
			bk.parkOnLocked(st, []*pdb.Budget{web, other})
			bk.unparkLocked(st)
		}, wantInBook: map[string]bool{"ns/web": false, "ns/other": false}},
		{name: "reserved", do: func(bk *budgetBook, st *podState) { bk.reserveLocked("ns/web", st) }, wantReserved: "ns/web"},
		{name: "reserved then released", do: func(bk *budgetBook, st *podState) {
			bk.reserveLocked("ns/web", st)
			bk.releaseLocked(st) // nothing parked: nothing to wake
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bk := newTestBook(t, web.PDB, other.PDB)
			st := &podState{key: "ns/a"}
			tc.do(bk, st)
			if !slices.Equal(st.parkedOn, tc.wantParkedOn) {
				t.Errorf("parkedOn %v, want %v", st.parkedOn, tc.wantParkedOn)
			}
			for key, want := range tc.wantInBook {
				if got := bk.parked[key][st.key] == st; got != want {
					t.Errorf("parked on %s: %v, want %v", key, got, want)
				}
			}
			if st.reservedOn != tc.wantReserved {
				t.Errorf("reservedOn %q, want %q", st.reservedOn, tc.wantReserved)
			}
			if got := bk.reserved["ns/web"][st.key]; got != (tc.wantReserved != "") {
				t.Errorf("reserved in the book: %v, want %v", got, tc.wantReserved != "")
			}
		})
	}
}

// A namespace's index is built once and rebuilt after a change drops it: a budget
// added to the store is found only then.
func TestBudgetBookIndex(t *testing.T) {
	bk := newTestBook(t, namedPDB("web", 1))
	pod := testPod("web-a", "n1")
	if got := len(bk.budgetsForLocked(pod)); got != 1 {
		t.Fatalf("budgets for the pod: %d, want 1", got)
	}
	if err := bk.pdbs.Add(namedPDB("more", 1)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		forget  bool
		want    int
		wantGet bool
	}{
		{name: "until the namespace's index is dropped, the cached index answers", want: 1},
		{name: "once dropped, the new budget is found", forget: true, want: 2, wantGet: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.forget {
				delete(bk.index, "ns")
			}
			if got := len(bk.budgetsForLocked(pod)); got != tc.want {
				t.Errorf("budgets for the pod: %d, want %d", got, tc.want)
			}
			if got := bk.budgetLocked("ns/more") != nil; got != tc.wantGet {
				t.Errorf("budget ns/more found: %v, want %v", got, tc.wantGet)
			}
		})
	}
}

// A reservation ends with the evidence a new status gives: the pod listed in
// disruptedPods, the pod gone from the run, or an answered request and numbers that
// moved; a request in flight keeps it whatever moved.
func TestBudgetBookStatusSeen(t *testing.T) {
	for _, tc := range []struct {
		name   string
		listed bool
		gone   bool
		phase  podPhase
		moved  bool
		want   bool // still reserved
	}{
		{name: "listed in disruptedPods", listed: true, phase: waiting, want: false},
		{name: "the pod left the run", gone: true, want: false},
		{name: "answered, numbers moved", phase: terminating, moved: true, want: false},
		{name: "answered, only a condition changed", phase: terminating, want: true},
		{name: "in flight, numbers moved", phase: waiting, moved: true, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bk := newTestBook(t)
			st := &podState{key: "ns/web-a", phase: tc.phase}
			bk.reserveLocked("ns/web", st)
			pods := map[string]*podState{st.key: st}
			if tc.gone {
				delete(pods, st.key)
			}
			p := namedPDB("web", 0)
			if tc.listed {
				p.Status.DisruptedPods = map[string]metav1.Time{"web-a": {}}
			}
			bk.statusSeenLocked(p, tc.moved, pods)
			if got := bk.reserved["ns/web"][st.key]; got != tc.want {
				t.Errorf("reserved in the book: %v, want %v", got, tc.want)
			}
			if got := st.reservedOn != ""; got != tc.want && !tc.gone {
				t.Errorf("pod's reservedOn set: %v, want %v", got, tc.want)
			}
		})
	}
}
