package drain

import (
	"reflect"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

func TestBlockKey(t *testing.T) {
	budget := func(ns, name string) *pdb.Budget {
		return &pdb.Budget{PDB: &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}}
	}
	for name, tc := range map[string]struct {
		budgets   []*pdb.Budget
		reason    string
		str       string
		keys      []string
		exhausted bool
	}{
		"the server's word is exhausted": {[]*pdb.Budget{budget("ns", "web")}, "DisruptionBudget", "ns/web|Exhausted", []string{"ns/web"}, true},
		"two budgets keep their order":   {[]*pdb.Budget{budget("ns", "b"), budget("ns", "a")}, string(pdb.Multiple), "ns/b,ns/a|" + string(pdb.Multiple), []string{"ns/b", "ns/a"}, false},
		"no budget names none":           {nil, "TooManyRequests", "|TooManyRequests", nil, false},
	} {
		t.Run(name, func(t *testing.T) {
			k := newBlockKey(tc.budgets, tc.reason)
			if k.String() != tc.str || k.exhausted() != tc.exhausted || k.isZero() || !reflect.DeepEqual(k.budgetKeys(), tc.keys) {
				t.Errorf("key %v: exhausted %v keys %q, want %q exhausted %v keys %q", k, k.exhausted(), k.budgetKeys(), tc.str, tc.exhausted, tc.keys)
			}
			if k != newBlockKey(tc.budgets, tc.reason) {
				t.Error("the same wait gives two keys")
			}
		})
	}
	if !(blockKey{}).isZero() {
		t.Error("the zero key is a wait")
	}
}
