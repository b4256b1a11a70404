package pdb

import (
	"reflect"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestHolds(t *testing.T) {
	evicted := time.Date(2026, 11, 28, 12, 1, 41, 0, time.UTC) // the entry's time, as the API server wrote it
	at := func(d time.Duration) time.Time { return evicted.Add(d) }
	entry := func(d time.Duration) metav1.Time { return metav1.NewTime(at(d)) }
	hold := func(pod string, uid string, d time.Duration) Hold {
		return Hold{Pod: pod, UID: types.UID(uid), OwnerKind: "StatefulSet", Since: at(d), Until: at(d + DeletionTimeout)}
	}
	tests := []struct {
		name      string
		disrupted map[string]metav1.Time
		pods      map[string]PodState
		now       time.Time
		want      []Hold
	}{
		{name: "no status.disruptedPods: no hold", pods: map[string]PodState{"db-0": {Created: at(time.Minute)}}, now: at(time.Minute)},
		{name: "an empty map: no hold", disrupted: map[string]metav1.Time{}, now: at(0)},
		{
			name:      "a replacement created after the eviction, not deleting, is held until the entry's time + 2 minutes",
			disrupted: map[string]metav1.Time{"db-0": entry(0)},
			pods:      map[string]PodState{"db-0": {UID: "new", Created: at(5 * time.Second), OwnerKind: "StatefulSet"}},
			now:       at(10 * time.Second),
			want:      []Hold{hold("db-0", "new", 0)},
		},
		{
			name:      "the evicted pod still there (created before the eviction) is an eviction in flight",
			disrupted: map[string]metav1.Time{"db-0": entry(0)},
			pods:      map[string]PodState{"db-0": {UID: "old", Created: at(-time.Hour)}},
			now:       at(time.Second),
		},
		{
			name:      "a pod created in the eviction's very second is taken as the evicted one (one-second resolution)",
			disrupted: map[string]metav1.Time{"db-0": entry(0)},
			pods:      map[string]PodState{"db-0": {UID: "same-second", Created: at(999 * time.Millisecond)}},
			now:       at(2 * time.Second),
		},
		{
			name:      "created one second after the eviction: a hold",
			disrupted: map[string]metav1.Time{"db-0": entry(0)},
			pods:      map[string]PodState{"db-0": {UID: "new", Created: at(time.Second), OwnerKind: "StatefulSet"}},
			now:       at(2 * time.Second),
			want:      []Hold{hold("db-0", "new", 0)},
		},
		{
			name:      "the evicted pod absent: the controller drops the entry, no hold",
			disrupted: map[string]metav1.Time{"db-0": entry(0)},
			pods:      map[string]PodState{"db-1": {UID: "other", Created: at(5 * time.Second)}},
			now:       at(10 * time.Second),
		},
		{
			name:      "a replacement already deleting: the controller drops the entry, no hold",
			disrupted: map[string]metav1.Time{"db-0": entry(0)},
			pods:      map[string]PodState{"db-0": {UID: "new", Created: at(5 * time.Second), Deleting: true}},
			now:       at(10 * time.Second),
		},
		{
			name:      "at exactly the entry's time + DeletionTimeout the controller still keeps it",
			disrupted: map[string]metav1.Time{"db-0": entry(0)},
			pods:      map[string]PodState{"db-0": {UID: "new", Created: at(5 * time.Second), OwnerKind: "StatefulSet"}},
			now:       at(DeletionTimeout),
			want:      []Hold{hold("db-0", "new", 0)},
		},
		{
			name:      "a nanosecond after it the controller drops it",
			disrupted: map[string]metav1.Time{"db-0": entry(0)},
			pods:      map[string]PodState{"db-0": {UID: "new", Created: at(5 * time.Second)}},
			now:       at(DeletionTimeout + time.Nanosecond),
		},
		{
			name: "several entries: holds sorted by their end, in-flight and absent ones left out",
			disrupted: map[string]metav1.Time{
				"db-0": entry(30 * time.Second), // a hold, ends last
				"db-1": entry(0),                // a hold, ends first
				"db-2": entry(40 * time.Second), // in flight: db-2 is the evicted pod
				"db-3": entry(10 * time.Second), // gone, no replacement yet
				"db-4": entry(0),                // same end as db-1, sorted by name after it
			},
			pods: map[string]PodState{
				"db-0": {UID: "r0", Created: at(35 * time.Second), OwnerKind: "StatefulSet"},
				"db-1": {UID: "r1", Created: at(7 * time.Second), OwnerKind: "StatefulSet"},
				"db-2": {UID: "o2", Created: at(-time.Hour), OwnerKind: "StatefulSet"},
				"db-4": {UID: "r4", Created: at(6 * time.Second), OwnerKind: "StatefulSet"},
			},
			now:  at(45 * time.Second),
			want: []Hold{hold("db-1", "r1", 0), hold("db-4", "r4", 0), hold("db-0", "r0", 30*time.Second)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Holds(tc.disrupted, tc.pods, tc.now)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Holds =\n  %+v\nwant\n  %+v", got, tc.want)
			}
		})
	}
}

func TestHoldsOf(t *testing.T) {
	evicted := time.Date(2026, 11, 28, 12, 1, 41, 0, time.UTC)
	b := &policyv1.PodDisruptionBudget{Status: policyv1.PodDisruptionBudgetStatus{
		DisruptedPods: map[string]metav1.Time{"db-0": metav1.NewTime(evicted)}}}
	pods := map[string]PodState{"db-0": {UID: "new", Created: evicted.Add(3 * time.Second)}}
	if got := HoldsOf(b, pods, evicted.Add(4*time.Second)); len(got) != 1 || got[0].Pod != "db-0" {
		t.Errorf("HoldsOf = %+v, want db-0's hold", got)
	}
	if got := HoldsOf(nil, pods, evicted); got != nil {
		t.Errorf("HoldsOf(nil) = %+v, want none", got)
	}
}

func TestHoldString(t *testing.T) {
	until := time.Date(2026, 11, 28, 12, 3, 41, 0, time.UTC)
	tests := []struct {
		name string
		hold Hold
		want string
	}{
		{name: "a StatefulSet's pod", hold: Hold{Pod: "db-0", OwnerKind: "StatefulSet", Until: until},
			want: "held by the disruption controller until 12:03:41Z: a StatefulSet replacement with the same name (DeletionTimeout)"},
		{name: "an owner not known", hold: Hold{Pod: "x", Until: until},
			want: "held by the disruption controller until 12:03:41Z: a replacement with the same name (DeletionTimeout)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.hold.String(); got != tc.want {
				t.Errorf("String = %q, want %q", got, tc.want)
			}
		})
	}
}
