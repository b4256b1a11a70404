package nodepool

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

func TestGet(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(
		&v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "green"}},
		&v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "blue"}}).Build()
	tests := map[string]struct {
		names        []string
		pools, wantM string
	}{
		"no name: every pool, sorted":              {pools: "[blue green]", wantM: "[]"},
		"names: in the order given":                {names: []string{"green", "blue"}, pools: "[green blue]", wantM: "[]"},
		"a name that does not exist is missing":    {names: []string{"red", "blue"}, pools: "[blue]", wantM: "[red]"},
		"only missing names: no pool, all missing": {names: []string{"red"}, pools: "[]", wantM: "[red]"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pools, missing, err := Get(context.Background(), c, tc.names)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range pools {
				got = append(got, p.Name)
			}
			if fmt.Sprint(got) != tc.pools || fmt.Sprint(missing) != tc.wantM {
				t.Errorf("pools %v, missing %v; want %s and %s", got, missing, tc.pools, tc.wantM)
			}
		})
	}
}
