package cli

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	// The fake clientset cannot serve streaming lists (watch-list), which client-go's
	// reflectors use by default against a real API server; turn them off for the fakes.
	_ = os.Setenv("KUBE_FEATURE_WatchListClient", "false")
	os.Exit(m.Run())
}
