package cli

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// --surge is a flag of drain and plan (and of the pool drains and moves, which take
// drain's flags), off by default, and asks the operations layer to surge only when given.
func TestSurgeFlag(t *testing.T) {
	c := &Common{}
	for _, cmd := range []*cobra.Command{NewCmdDrain(c), NewCmdPlan(c), NewCmdPoolMove(c), newCmdPoolSync(c)} {
		f := cmd.Flags().Lookup("surge")
		if f == nil || f.DefValue != "false" {
			t.Errorf("%s: --surge %v, want a flag defaulting to false", cmd.Name(), f)
		}
	}
	o := NewDrainOptions(c)
	if o.request(operation.Drain).Surge {
		t.Errorf("without --surge the request surges (it should only resume surges)")
	}
	o.Surge = true
	if !o.request(operation.Drain).Surge {
		t.Errorf("with --surge the request does not surge")
	}
}
