package ownership

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// tn is a node with labels, taints ("k=v:Effect") and pool records (pool -> Record).
func tn(labels map[string]string, taints []string, recs map[string]Record) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{}, Annotations: map[string]string{}}}
	maps.Copy(n.Labels, labels)
	for _, s := range taints {
		n.Spec.Taints = append(n.Spec.Taints, parseTaint(s))
	}
	for p, r := range recs {
		b, _ := json.Marshal(r)
		n.Annotations[RecordAnnotation(p)] = string(b)
	}
	return n
}

func parseTaint(s string) corev1.Taint {
	kv, effect, _ := strings.Cut(s, ":")
	k, v, _ := strings.Cut(kv, "=")
	return corev1.Taint{Key: k, Value: v, Effect: corev1.TaintEffect(effect)}
}

func rec(labels map[string]string, taints ...string) Record {
	r := Record{Labels: labels}
	for _, s := range taints {
		r.Taints = append(r.Taints, parseTaint(s))
	}
	return r
}

func tp(name string, labels map[string]string, taints ...string) *v1alpha1.NodePool {
	var ts []v1alpha1.Taint
	for _, s := range taints {
		t := parseTaint(s)
		ts = append(ts, v1alpha1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
	}
	return pool(name, labels, ts...)
}

func role(p string) string { return nodepool.RoleLabel(p) }

// TestCompute is Compute's table: what a pool adds, changes and removes, and when it
// refuses (a ConflictError naming the other owner, or the hand edit).
func TestCompute(t *testing.T) {
	type want struct {
		labels  map[string]string
		taints  []string           // sorted "k=v:Effect"
		records map[string]*Record // nil value: the record is removed; absent: untouched
		changed bool
		// conflict, when set, is the ConflictError expected: Other pool ("" outside any
		// pool) and whether it names a hand-edited recorded value.
		conflict *ConflictError
	}
	blue := tp("blue", map[string]string{"tier": "blue"}, "ded=blue:NoSchedule")
	tests := []struct {
		name   string
		node   *corev1.Node
		apply  []*v1alpha1.NodePool
		remove []string
		want   want
	}{
		{name: "add: a pool's labels, role label and taints, recorded",
			node: tn(nil, nil, nil), apply: []*v1alpha1.NodePool{blue},
			want: want{labels: map[string]string{"tier": "blue", role("blue"): ""}, taints: []string{"ded=blue:NoSchedule"}, changed: true,
				records: map[string]*Record{"blue": {Labels: map[string]string{"tier": "blue", role("blue"): ""}, Taints: []corev1.Taint{parseTaint("ded=blue:NoSchedule")}}}}},
		{name: "add again: nothing changes",
			node:  tn(map[string]string{"tier": "blue", role("blue"): ""}, []string{"ded=blue:NoSchedule"}, map[string]Record{"blue": rec(map[string]string{"tier": "blue", role("blue"): ""}, "ded=blue:NoSchedule")}),
			apply: []*v1alpha1.NodePool{blue},
			want:  want{labels: map[string]string{"tier": "blue", role("blue"): ""}, taints: []string{"ded=blue:NoSchedule"}}},
		{name: "spec change: a label's new value replaces the recorded one",
			node:  tn(map[string]string{"tier": "old", role("blue"): ""}, nil, map[string]Record{"blue": rec(map[string]string{"tier": "old", role("blue"): ""})}),
			apply: []*v1alpha1.NodePool{tp("blue", map[string]string{"tier": "new"})},
			want:  want{labels: map[string]string{"tier": "new", role("blue"): ""}, changed: true}},
		{name: "spec change: a label the pool no longer wants is removed",
			node:  tn(map[string]string{"tier": "blue", "gpu": "yes", role("blue"): ""}, nil, map[string]Record{"blue": rec(map[string]string{"tier": "blue", "gpu": "yes", role("blue"): ""})}),
			apply: []*v1alpha1.NodePool{tp("blue", map[string]string{"tier": "blue"})},
			want:  want{labels: map[string]string{"tier": "blue", role("blue"): ""}, changed: true}},
		{name: "spec change: a taint's new value replaces the recorded one, a dropped taint goes",
			node: tn(map[string]string{role("blue"): ""}, []string{"ded=old:NoSchedule", "gone=x:NoExecute"},
				map[string]Record{"blue": rec(map[string]string{role("blue"): ""}, "ded=old:NoSchedule", "gone=x:NoExecute")}),
			apply: []*v1alpha1.NodePool{tp("blue", nil, "ded=new:NoSchedule")},
			want:  want{labels: map[string]string{role("blue"): ""}, taints: []string{"ded=new:NoSchedule"}, changed: true}},
		{name: "remove: what the pool recorded goes, with its record; a hand-set label stays",
			node: tn(map[string]string{"tier": "blue", role("blue"): "", "owner": "team-a"}, []string{"ded=blue:NoSchedule", "window=sun:PreferNoSchedule"},
				map[string]Record{"blue": rec(map[string]string{"tier": "blue", role("blue"): ""}, "ded=blue:NoSchedule")}),
			remove: []string{"blue"},
			want:   want{labels: map[string]string{"owner": "team-a"}, taints: []string{"window=sun:PreferNoSchedule"}, changed: true, records: map[string]*Record{"blue": nil}}},
		{name: "remove: a value changed by hand since is not the pool's any more and stays",
			node:   tn(map[string]string{"tier": "hand"}, []string{"ded=hand:NoSchedule"}, map[string]Record{"blue": rec(map[string]string{"tier": "blue"}, "ded=blue:NoSchedule")}),
			remove: []string{"blue"},
			want:   want{labels: map[string]string{"tier": "hand"}, taints: []string{"ded=hand:NoSchedule"}, changed: true, records: map[string]*Record{"blue": nil}}},
		{name: "remove: what another pool recorded too stays",
			node: tn(map[string]string{"zone": "a"}, []string{"shared=x:NoSchedule"}, map[string]Record{
				"blue": rec(map[string]string{"zone": "a"}, "shared=x:NoSchedule"), "green": rec(map[string]string{"zone": "a"}, "shared=x:NoSchedule")}),
			apply: []*v1alpha1.NodePool{tp("green", map[string]string{"zone": "a"}, "shared=x:NoSchedule")}, remove: []string{"blue"},
			want: want{labels: map[string]string{"zone": "a", role("green"): ""}, taints: []string{"shared=x:NoSchedule"}, changed: true, records: map[string]*Record{"blue": nil}}},
		{name: "move: the old pool's out and the new one's in, in one change",
			node: tn(map[string]string{"tier": "blue", role("blue"): ""}, []string{"ded=blue:NoSchedule"},
				map[string]Record{"blue": rec(map[string]string{"tier": "blue", role("blue"): ""}, "ded=blue:NoSchedule")}),
			apply: []*v1alpha1.NodePool{tp("green", map[string]string{"tier": "green"}, "ded=green:NoSchedule")}, remove: []string{"blue"},
			want: want{labels: map[string]string{"tier": "green", role("green"): ""}, taints: []string{"ded=green:NoSchedule"}, changed: true, records: map[string]*Record{"blue": nil}}},
		{name: "conflict: two pools want one label with different values",
			node:  tn(map[string]string{"tier": "green"}, nil, map[string]Record{"green": rec(map[string]string{"tier": "green"})}),
			apply: []*v1alpha1.NodePool{blue},
			want:  want{conflict: &ConflictError{Other: "green"}}},
		{name: "conflict: two pools want one taint with different values",
			node:  tn(nil, []string{"ded=green:NoSchedule"}, map[string]Record{"green": rec(nil, "ded=green:NoSchedule")}),
			apply: []*v1alpha1.NodePool{tp("blue", nil, "ded=blue:NoSchedule")},
			want:  want{conflict: &ConflictError{Other: "green"}}},
		{name: "foreign key: a label set outside any pool with another value",
			node: tn(map[string]string{"tier": "hand"}, nil, nil), apply: []*v1alpha1.NodePool{blue},
			want: want{conflict: &ConflictError{}}},
		{name: "foreign key: a taint set outside any pool with another value",
			node: tn(nil, []string{"ded=hand:NoSchedule"}, nil), apply: []*v1alpha1.NodePool{tp("blue", nil, "ded=blue:NoSchedule")},
			want: want{conflict: &ConflictError{}}},
		{name: "foreign key, same value: the hand's label and taint stay the hand's, not recorded",
			node: tn(map[string]string{"tier": "blue"}, []string{"ded=blue:NoSchedule"}, nil), apply: []*v1alpha1.NodePool{blue},
			want: want{labels: map[string]string{"tier": "blue", role("blue"): ""}, taints: []string{"ded=blue:NoSchedule"}, changed: true,
				records: map[string]*Record{"blue": {Labels: map[string]string{role("blue"): ""}}}}},
		{name: "hand-edited value: a recorded label changed by hand is a conflict naming both values",
			node:  tn(map[string]string{"tier": "hand", role("blue"): ""}, nil, map[string]Record{"blue": rec(map[string]string{"tier": "blue", role("blue"): ""})}),
			apply: []*v1alpha1.NodePool{blue},
			want:  want{conflict: &ConflictError{Recorded: new(string)}}},
		{name: "hand-edited value: a recorded taint changed by hand is a conflict naming both values",
			node:  tn(map[string]string{role("blue"): ""}, []string{"ded=hand:NoSchedule"}, map[string]Record{"blue": rec(map[string]string{role("blue"): ""}, "ded=blue:NoSchedule")}),
			apply: []*v1alpha1.NodePool{tp("blue", nil, "ded=blue:NoSchedule")},
			want:  want{conflict: &ConflictError{Recorded: new(string)}}},
		{name: "role label: set before the pool (any value), it stays and is not recorded",
			node: tn(map[string]string{role("blue"): "yes"}, nil, nil), apply: []*v1alpha1.NodePool{tp("blue", nil)},
			want: want{labels: map[string]string{role("blue"): "yes"}, changed: true, records: map[string]*Record{"blue": {Labels: map[string]string{}}}}},
		{name: "role label: set before the pool, it stays when the pool goes",
			node:   tn(map[string]string{role("blue"): ""}, nil, map[string]Record{"blue": {Labels: map[string]string{}}}),
			remove: []string{"blue"},
			want:   want{labels: map[string]string{role("blue"): ""}, changed: true, records: map[string]*Record{"blue": nil}}},
		{name: "a taint of the same key and another effect is another taint",
			node: tn(nil, []string{"ded=hand:NoExecute"}, nil), apply: []*v1alpha1.NodePool{tp("blue", nil, "ded=blue:NoSchedule")},
			want: want{labels: map[string]string{role("blue"): ""}, taints: []string{"ded=blue:NoSchedule", "ded=hand:NoExecute"}, changed: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Compute(tt.node, tt.apply, tt.remove)
			if tt.want.conflict != nil {
				var ce *ConflictError
				if !errors.As(err, &ce) {
					t.Fatalf("Compute = %v, want a ConflictError", err)
				}
				if ce.Other != tt.want.conflict.Other || (ce.Recorded != nil) != (tt.want.conflict.Recorded != nil) {
					t.Errorf("conflict %+v (%v), want other %q, recorded %v", ce, ce, tt.want.conflict.Other, tt.want.conflict.Recorded != nil)
				}
				return
			}
			if err != nil {
				t.Fatalf("Compute: %v", err)
			}
			if !maps.Equal(d.Labels, tt.want.labels) && (len(d.Labels) != 0 || len(tt.want.labels) != 0) {
				t.Errorf("labels %v, want %v", d.Labels, tt.want.labels)
			}
			var taints []string
			for _, x := range d.Taints {
				taints = append(taints, x.Key+"="+x.Value+":"+string(x.Effect))
			}
			slices.Sort(taints)
			if !slices.Equal(taints, tt.want.taints) {
				t.Errorf("taints %v, want %v", taints, tt.want.taints)
			}
			if d.Changed != tt.want.changed {
				t.Errorf("Changed = %v, want %v", d.Changed, tt.want.changed)
			}
			for p, r := range tt.want.records {
				got, ok := d.Annotations[RecordAnnotation(p)]
				switch {
				case r == nil && (!ok || got != nil):
					t.Errorf("record of %s: %v, want it removed", p, got)
				case r != nil && (!ok || got == nil):
					t.Errorf("record of %s not written", p)
				case r != nil:
					var have Record
					if err := json.Unmarshal([]byte(*got), &have); err != nil {
						t.Fatal(err)
					}
					if !maps.Equal(have.Labels, r.Labels) || !slices.Equal(have.Taints, r.Taints) {
						t.Errorf("record of %s = %+v, want %+v", p, have, *r)
					}
				}
			}
		})
	}
}

// An ownership record that is not one is an error naming the annotation.
func TestComputeRefusesABrokenRecord(t *testing.T) {
	n := tn(nil, nil, nil)
	n.Annotations[RecordAnnotation("blue")] = "{not json"
	if _, err := Compute(n, nil, []string{"blue"}); err == nil || !strings.Contains(err.Error(), RecordAnnotation("blue")) {
		t.Errorf("Compute = %v, want an error naming the annotation", err)
	}
}
