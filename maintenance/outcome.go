package maintenance

import (
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/outcome"
)

// phaseOf is the phase and the Progressing reason of a Maintenance whose run ended with
// err (package outcome: the CLI's exit code for the same error comes from the same row).
// A run stopped from outside without the object saying why (its context cancelled while
// the object stays) is Failed: the object does not say it was interrupted on purpose.
func phaseOf(err error) (v1alpha1.Phase, string) {
	o := outcome.Of(err)
	if o == outcome.Interrupted {
		o = outcome.Failed
	}
	return v1alpha1.Phase(o.Phase()), o.Reason()
}
