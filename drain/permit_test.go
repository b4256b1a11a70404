package drain

import (
	"context"
	"errors"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
)

// Permit is asked once the plan is made, with the namespaces whose Deployments --surge
// will scale; a refusal ends the run there: no cordon, no surge, no eviction.
func TestPermitIsAskedBeforeAnythingChanges(t *testing.T) {
	denied := errors.New("cannot patch deployments.apps in namespace \"ns\"")
	for _, tc := range []struct {
		name     string
		objs     []runtime.Object
		answer   error
		wantNS   string
		cordoned bool
	}{
		{name: "a surge refused: nothing changed", answer: denied, wantNS: "[ns]",
			objs: []runtime.Object{testNode("n1"), podOn("web-1", "n1", "u1"), minAvailableOne(1, 1, 0, "1")}},
		{name: "nothing to surge: asked with none, the drain goes on", wantNS: "[]", cordoned: true,
			objs: []runtime.Object{testNode("n1"), testPDB(1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := kubefake.New(tc.objs...)
			surger := &fakeSurger{}
			var asked []string
			calls := 0
			eng, err := NewEngine(Config{Client: client, Events: make(chan event.Event, 100), Surge: surger,
				Permit: func(_ context.Context, p Permits) error {
					calls++
					asked = append([]string{}, p.SurgeNamespaces...)
					return tc.answer
				}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = eng.Run(context.Background(), []string{"n1"})
			if !errors.Is(err, tc.answer) || (tc.answer == nil && err != nil) {
				t.Errorf("Run = %v, want %v", err, tc.answer)
			}
			if calls != 1 || fmt.Sprint(asked) != tc.wantNS {
				t.Errorf("Permit asked %d times with %v, want once with %s", calls, asked, tc.wantNS)
			}
			n, err := client.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if n.Spec.Unschedulable != tc.cordoned {
				t.Errorf("node cordoned: %v, want %v", n.Spec.Unschedulable, tc.cordoned)
			}
			if tc.answer != nil && surger.Calls() != "check" {
				t.Errorf("surger calls %q after a refusal, want only the plan's check", surger.Calls())
			}
		})
	}
}
