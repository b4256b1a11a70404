// Package maintenance runs Maintenance objects (maintenance/api/v1alpha1) in the cluster:
// Request turns a Maintenance's spec into the operations layer's Request, and Reconciler
// runs each Running object as one operation.Run, writing what it does into the object's
// status (when something changed, at most every StatusInterval, never per eviction).
// A node is in at most one run at a time: an object that wants a node another holds
// waits with a condition naming it. The runs share one view of the budgets (a drain.Ledger), and
// the runs that start within AdmissionWindow of one another cordon all their nodes
// before any evicts (admission.go). Pausing or deleting an object cancels its run; the
// nodes keep their state and a later run resumes from their records, as a re-run of the
// CLI does.
//
// For the front ends it creates, reads and changes the objects (Create, Get, SetPaused,
// Cancel; a missing name is a usage error) and follows one until it ends (Follower:
// each node's change, the pickup warning's likely cause, the summary), leaving the lines
// to the caller.
//
// It never prints and imports neither cobra nor bubbletea.
package maintenance
