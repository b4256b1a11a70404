// Package platform holds the tests that prove the local control plane behaves like a real
// cluster where this product depends on it: the disruption controller computes PDB status,
// the Eviction API answers 429 and 500 as documented, replacements are scheduled and become
// Ready, nodes keep their heartbeats, and no component process outlives the tests.
package platform
