// Package drainrule reads and matches drain rules: which pods of a node go first, which
// last, which are left and which are waited for (Cluster API's MachineDrainRule shape:
// a pod selector and a namespace selector, an order or a behavior).
//
// Rules come from three places: Cluster API's MachineDrainRule objects (group
// cluster.x-k8s.io, read only when that CRD is served), a Maintenance's spec.drain.order,
// and the --drain-order flag or --drain-order-file. A pod's rule is decided as Cluster
// API decides it: the cluster.x-k8s.io/drain pod label first, then the run's own rules in
// the order given, then the MachineDrainRules sorted by name; the first match wins, and
// a pod no rule matches is drained in order 0.
//
// The package makes no decision about evictions and never prints; the drain engine asks
// it for each pod's Verdict.
package drainrule
