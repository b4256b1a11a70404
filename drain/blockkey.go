package drain

import (
	"strings"

	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// blockKey names what a waiting pod waits on: the budgets its last wait named and the
// class of that wait (pdb.Exhausted for the server's "DisruptionBudget", or the reason as
// given). Two pods with equal keys wait on the same thing and are said as one wait line.
// The zero key is no wait.
type blockKey struct {
	budgets string // the budgets' keys as pdb.JoinKeys joins them
	class   string
}

// newBlockKey is the key of a wait on budgets for reason.
func newBlockKey(budgets []*pdb.Budget, reason string) blockKey {
	class := reason
	if reason == "DisruptionBudget" {
		class = string(pdb.Exhausted) // the server's word for the same wait
	}
	return blockKey{budgets: pdb.JoinKeys(budgets), class: class}
}

// isZero reports whether k is no wait.
func (k blockKey) isZero() bool { return k == blockKey{} }

// exhausted reports whether k is a wait on exhausted budgets.
func (k blockKey) exhausted() bool { return k.class == string(pdb.Exhausted) }

// budgetKeys returns the keys of the budgets k names, in their order.
func (k blockKey) budgetKeys() []string {
	if k.budgets == "" {
		return nil
	}
	return strings.Split(k.budgets, ",")
}

// String is "KEYS|CLASS", the order wait lines are said in.
func (k blockKey) String() string { return k.budgets + "|" + k.class }
