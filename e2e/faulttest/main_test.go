package faulttest

import (
	"os"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

var (
	shared *cluster.Cluster
	plugin string
)

func TestMain(m *testing.M) { os.Exit(fixture.TestMain(m, &shared, &plugin)) }
