package maintenance

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/outcome"
)

// Events returns the Events about the Maintenance name (in the default namespace), or
// none when they cannot be listed: what describe shows under the object.
func Events(ctx context.Context, cs kubernetes.Interface, name string) []corev1.Event {
	evs, err := cs.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.name": name, "involvedObject.kind": "Maintenance"}.String()})
	if err != nil {
		return nil
	}
	return evs.Items
}

// Outcome is the outcome of a finished Maintenance: the local run's for the same outcome
// (package outcome reads the phase and the Progressing condition's reason back).
func Outcome(m *v1alpha1.Maintenance) outcome.Outcome {
	reason := ""
	for _, cond := range m.Status.Conditions {
		if cond.Type == v1alpha1.ConditionProgressing {
			reason = cond.Reason
		}
	}
	return outcome.OfPhase(string(m.Status.Phase), reason)
}
