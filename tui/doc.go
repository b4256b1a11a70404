// Package tui is the interactive terminal dashboard (bubbletea). It reads a read-only model
// fed by informers and the drain engine's events, and never calls the Kubernetes API.
package tui
