//go:build tools

// Package tools pins golangci-lint, which `make lint` builds from the Go module proxy
// into the per-machine tool cache (hack/lint.sh).
package tools

import _ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
