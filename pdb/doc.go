// Package pdb analyses PodDisruptionBudgets from their status: which budgets select a pod,
// what each allows now, why a pod is blocked, and a cumulative simulation of a drain. It
// works on objects it is given (from listers) and makes no API calls of its own.
package pdb
