package maintenance

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/drainrule"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// spec.drain.order reaches the engine's settings as the same rules, and the flag's rules
// come back as the same spec (drain --server-side --drain-order); a bad rule is named by
// the settings' validation.
func TestDrainOrderFromTheSpec(t *testing.T) {
	spec := []v1alpha1.DrainOrderRule{
		{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "fluentd"}}, Order: ptr.To[int32](10)},
		{Name: "backups", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "backup"}}, Behavior: "WaitCompleted"},
	}
	for name, tc := range map[string]struct {
		order   []v1alpha1.DrainOrderRule
		want    string
		wantErr string
	}{
		"no rules":            {order: nil, want: ""},
		"order and behavior":  {order: spec, want: "app=fluentd:order 10|backups:wait-completed"},
		"an unknown behavior": {order: []v1alpha1.DrainOrderRule{{Name: "x", Behavior: "Later"}}, wantErr: `drain order rule x: unknown behavior "Later"`},
	} {
		t.Run(name, func(t *testing.T) {
			m := &v1alpha1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: "m"},
				Spec: v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionDrain, Nodes: []string{"n1"}, Drain: v1alpha1.DrainSettings{Order: tc.order}}}
			req, err := Request(m)
			if err == nil {
				err = req.Drain.Validate()
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			set, err := drainrule.Compile(req.Drain.DrainOrder)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range req.Drain.DrainOrder {
				name := r.Name
				if name == "" {
					name = metav1.FormatLabelSelector(r.Selector)
				}
				got = append(got, name+":"+set.Match(podWith(r.Selector.MatchLabels)).String())
			}
			if strings.Join(got, "|") != tc.want {
				t.Fatalf("rules %q, want %q", strings.Join(got, "|"), tc.want)
			}
			if back := SpecOrder(req.Drain.DrainOrder); len(back) != len(tc.order) {
				t.Fatalf("back to the spec: %d rules, want %d", len(back), len(tc.order))
			}
		})
	}
}

func podWith(lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: lbls}}
}
