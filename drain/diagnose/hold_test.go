package diagnose

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

func created(ago time.Duration) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.CreationTimestamp = metav1.Time{Time: now.Add(-ago)} }
}

func ownedBy(kind string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: kind, Name: "web", Controller: new(true)}}
	}
}

// A budget held by the disruption controller (an entry whose name a replacement took) says
// so with the hold's end; what is not a hold (the evicted pod itself still there, a
// replacement deleting, an entry past DeletionTimeout) is diagnosed as before.
func TestDisruptionHold(t *testing.T) {
	entry := func(ago time.Duration, names ...string) func(*policyv1.PodDisruptionBudget) {
		return func(p *policyv1.PodDisruptionBudget) {
			p.Status.DisruptedPods = map[string]metav1.Time{}
			for _, n := range names {
				p.Status.DisruptedPods[n] = metav1.Time{Time: now.Add(-ago)}
			}
		}
	}
	ours := func(k string) bool { return k == "ns/web-1" }
	for _, tc := range []struct {
		name    string
		b       *pdb.Budget
		pods    []*corev1.Pod
		kind    Kind // "": anything but a hold
		want    []string
		expires time.Time
	}{
		{name: "a StatefulSet replacement with the evicted pod's name: held until the entry is 2 minutes old",
			b:    budget("web", entry(20*time.Second, "web-1")),
			pods: []*corev1.Pod{pod("web-1", created(15*time.Second), ownedBy("StatefulSet")), pod("web-2")},
			kind: DisruptionHold, expires: now.Add(100 * time.Second),
			want: []string{"held by the disruption controller until 09:01:40Z (in 1m40s)", "a StatefulSet replacement with the same name as ns/web-1", "(DeletionTimeout)"}},
		{name: "two holds: the first's end, and the last's",
			b: budget("web", func(p *policyv1.PodDisruptionBudget) {
				p.Status.DisruptedPods = map[string]metav1.Time{"web-1": {Time: now.Add(-20 * time.Second)}, "web-2": {Time: now.Add(-60 * time.Second)}}
			}),
			pods: []*corev1.Pod{pod("web-1", created(15*time.Second)), pod("web-2", created(55*time.Second))},
			kind: DisruptionHold, expires: now.Add(60 * time.Second),
			want: []string{"until 09:01:00Z", "a replacement with the same name as ns/web-2", "1 more hold, the last until 09:01:40Z"}},
		{name: "the evicted pod is still there (created before the entry): this run's eviction in flight",
			b:    budget("web", entry(5*time.Second, "web-1")),
			pods: []*corev1.Pod{pod("web-1", created(time.Hour)), pod("web-2")},
			kind: ""},
		{name: "the replacement is deleting: no hold",
			b:    budget("web", entry(20*time.Second, "web-1")),
			pods: []*corev1.Pod{pod("web-1", created(15*time.Second), terminating(time.Second)), pod("web-2")},
			kind: ""},
		{name: "the entry is past DeletionTimeout: no hold",
			b:    budget("web", entry(3*time.Minute, "web-1")),
			pods: []*corev1.Pod{pod("web-1", created(2*time.Minute)), pod("web-2")},
			kind: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Diagnose(Input{Budgets: []*pdb.Budget{tc.b}, Selected: tc.pods, Now: now, Ours: ours})
			if tc.kind == "" {
				if d.Kind == DisruptionHold {
					t.Errorf("not a hold, diagnosed one: %q", d.Cause)
				}
				return
			}
			if d.Kind != tc.kind {
				t.Fatalf("kind %s (%q), want %s", d.Kind, d.Cause, tc.kind)
			}
			for _, w := range tc.want {
				if !strings.Contains(d.Cause, w) {
					t.Errorf("cause %q does not say %q", d.Cause, w)
				}
			}
			if !d.Expires.Equal(tc.expires) {
				t.Errorf("expires %s, want %s", d.Expires, tc.expires)
			}
			if tc.kind == DisruptionHold && !strings.Contains(d.Remedy, "wait") {
				t.Errorf("remedy %q", d.Remedy)
			}
		})
	}
}
