package diagnose

import (
	"fmt"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// holds finds the budget held by the disruption controller: an entry of its
// status.disruptedPods whose name a replacement now carries (created after the entry, not
// deleting; pdb.Holds). The controller matches entries by name, so it counts the
// replacement as disrupted, Ready or not, until the entry is DeletionTimeout old. Nothing
// a client does short of writing the budget's status hurries it: the budget's next
// eviction is due at the first hold's end, and the wait line says when.
func holds(in Input, b *pdb.Budget) (Diagnosis, bool) {
	pods := map[string]pdb.PodState{}
	for _, p := range in.Selected {
		pods[p.Name] = pdb.StateOf(p)
	}
	hs := pdb.HoldsOf(b.PDB, pods, in.Now)
	if len(hs) == 0 {
		return Diagnosis{}, false
	}
	keys := make([]string, 0, len(hs))
	for _, h := range hs {
		keys = append(keys, b.PDB.Namespace+"/"+h.Pod)
	}
	first := hs[0]
	what := "a replacement"
	if first.OwnerKind != "" {
		what = "a " + first.OwnerKind + " replacement"
	}
	until := first.Until.UTC().Format("15:04:05Z")
	cause := fmt.Sprintf("pdb %s %s: held by the disruption controller until %s (in %s): %s with the same name as %s (DeletionTimeout)",
		b.Key(), b.Numbers(), until, first.Until.Sub(in.Now).Round(time.Second), what, keys[0])
	if n := len(hs) - 1; n > 0 {
		cause += fmt.Sprintf("; %d more %s, the last until %s", n, plural(n, "hold", "holds"), hs[n].Until.UTC().Format("15:04:05Z"))
	}
	return Diagnosis{Kind: DisruptionHold, Pods: keys, Expires: first.Until, Cause: cause,
		Remedy: fmt.Sprintf("wait: the controller drops the entry at %s and the budget's next eviction goes then; it kept the entry because it synced the budget only after the replacement existed (kube-controller-manager behind)", until)}, true
}
