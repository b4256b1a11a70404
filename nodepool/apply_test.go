package nodepool

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

const twoPools = `# pools of the web tier
apiVersion: maintenance.kubectl-maintenance.io/v1alpha1
kind: NodePool
metadata:
  name: blue
spec:
  maxUnavailable: 2
---
---
# an empty document above, a comment-only one below
---
apiVersion: maintenance.kubectl-maintenance.io/v1alpha1
kind: NodePool
metadata:
  name: green
`

func TestReadPools(t *testing.T) {
	tests := map[string]struct {
		in      string
		names   []string
		wantErr string
	}{
		"every document, empty and comment-only ones skipped": {in: twoPools, names: []string{"blue", "green"}},
		"JSON is YAML too": {in: `{"apiVersion":"maintenance.kubectl-maintenance.io/v1alpha1","kind":"NodePool","metadata":{"name":"red"}}`, names: []string{"red"}},
		"nothing at all":   {in: "", names: nil},
		"an unknown field names its document": {in: twoPools + "spec:\n  maxUnavailabel: 1\n",
			wantErr: `invalid pool in pools.yaml (document 3): error unmarshaling JSON: while decoding JSON: json: unknown field "maxUnavailabel"`},
		"another kind": {in: "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n", wantErr: `it is a Node (v1), not a NodePool (apiVersion maintenance.kubectl-maintenance.io/v1alpha1)`},
		"a ConfigMap is named as one, not by its data field": {in: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\ndata:\n  a: b\n",
			wantErr: `invalid pool in pools.yaml (document 1): it is a ConfigMap (v1), not a NodePool`},
		"another project's NodePool": {in: "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: n\nspec:\n  template: {}\n",
			wantErr: `a NodePool of apiVersion "karpenter.sh/v1", not maintenance.kubectl-maintenance.io/v1alpha1`},
		"no kind at all":        {in: "metadata:\n  name: n\n", wantErr: "it has no apiVersion and no kind"},
		"a pool without a name": {in: "apiVersion: maintenance.kubectl-maintenance.io/v1alpha1\nkind: NodePool\n", wantErr: "metadata.name is required"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			docs, err := ReadPools(strings.NewReader(tc.in), "pools.yaml")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if u, ok := err.(*UsageError); !ok || !u.Usage() {
					t.Errorf("err is %T, want a usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, d := range docs {
				names = append(names, d.Pool.Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.names, ",") {
				t.Errorf("pools = %v, want %v", names, tc.names)
			}
		})
	}
}

func TestCheckDuplicates(t *testing.T) {
	docs, err := ReadPools(strings.NewReader(twoPools+"---\n"+strings.SplitN(twoPools, "---", 2)[0]), "pools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckDuplicates(docs); err == nil || !strings.Contains(err.Error(), "pool blue is defined twice: in pools.yaml (document 1) and in pools.yaml (document 4)") {
		t.Errorf("err = %v", err)
	}
}

func TestApplySaysCreatedConfiguredUnchanged(t *testing.T) {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	c := fake.NewClientBuilder().WithScheme(s).Build()
	docs, err := ReadPools(strings.NewReader(twoPools), "pools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, want := range []ApplyResult{Created, Unchanged} {
		res, err := Apply(ctx, c, docs[0].Pool)
		if err != nil {
			t.Fatal(err)
		}
		if res != want {
			t.Errorf("apply = %s, want %s", res, want)
		}
	}
	changed := docs[0].Pool.DeepCopy()
	three := int32(3)
	changed.Spec.MaxUnavailable = &three
	if res, err := Apply(ctx, c, changed); err != nil || res != Configured {
		t.Errorf("apply of a changed spec = %s, %v; want configured", res, err)
	}
}
