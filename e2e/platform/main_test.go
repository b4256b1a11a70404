package platform

import (
	"os"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
)

var shared *cluster.Cluster

func TestMain(m *testing.M) {
	if os.Getenv(crashHelperEnv) != "" {
		crashHelper()
		return
	}
	os.Exit(cluster.Main(m, cluster.Options{}, &shared))
}
