// Package faulttest holds the end-to-end tests that inject faults into a drain on the
// real local cluster: the API server killed and restarted, kube-controller-manager stopped
// (PDB status frozen), users missing a permission, and two drains of overlapping nodes
// at once. Each test runs under the guard (no pod deleted without the Eviction API, no
// PDB below its desired count) and logs its timeline as FIGURE lines.
package faulttest
