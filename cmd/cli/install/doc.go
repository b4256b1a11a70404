// Package install puts the project into a cluster and takes it out again: the CRDs
// (package crd) and, for the in-cluster controller, its RBAC and Deployment (package
// config). Objects decodes the embedded manifests into unstructured objects, with the
// caller's image and namespace, in apply order; Apply server-side applies them (field
// manager FieldManager) and reports each as created, configured or unchanged; Uninstall
// deletes them, the controller first and the CRDs last, and refuses while Maintenances
// run or NodePools exist unless forced.
//
// It never prints and imports no cobra: cmd/cli turns its Results into lines, or its
// objects into a YAML stream for --dry-run=client.
package install
