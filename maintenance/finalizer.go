package maintenance

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// patchFinalizers changes m's finalizers with a metadata-only merge patch (the
// resourceVersion guards it against a concurrent change of the list). Never an Update:
// that would send the whole spec as Go serializes it, with the non-pointer drain and
// policy blocks as {} where the stored object had none, which the CRD's immutability
// rule refuses (and the controller never writes the spec). m is updated from the answer.
func patchFinalizers(ctx context.Context, c client.Client, m *v1alpha1.Maintenance, change func(client.Object)) error {
	want := m.DeepCopy()
	change(want)
	fins := want.Finalizers
	if fins == nil {
		fins = []string{}
	}
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": fins, "resourceVersion": m.ResourceVersion}})
	if err != nil {
		return fmt.Errorf("encode the finalizers patch: %w", err)
	}
	return c.Patch(ctx, m, client.RawPatch(types.MergePatchType, data))
}
