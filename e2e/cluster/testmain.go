package cluster

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// Main runs a test package against one shared local cluster: it starts the cluster
// (unless -short), stores it in *shared, runs the tests, stops the cluster, and then
// asserts that no component process is left; a leftover process fails the run. A Ctrl-C
// or SIGTERM stops the cluster before the binary exits with 130. Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(cluster.Main(m, cluster.Options{}, &testCluster)) }
func Main(m *testing.M, opts Options, shared **Cluster) int {
	flag.Parse()
	if testing.Short() {
		return m.Run()
	}
	if opts.Logf == nil {
		opts.Logf = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	}
	c, err := Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "local cluster: %v\n", err)
		return 1
	}
	*shared = c
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		fmt.Fprintln(os.Stderr, "local cluster: interrupted, stopping every component")
		c.Stop()
		os.Exit(130)
	}()

	code := m.Run()
	opts.Logf("local cluster: peak memory %s", c.PeakMemoryReport())
	dir := c.Dir
	c.Stop()
	signal.Stop(sigs)
	left, err := ProcessesUnder(dir)
	switch {
	case err != nil:
		fmt.Fprintf(os.Stderr, "local cluster: check leftover processes: %v\n", err)
		return 1
	case len(left) > 0:
		fmt.Fprintf(os.Stderr, "local cluster: FAIL: %d component processes still running after stop: %v\n", len(left), left)
		return 1
	}
	opts.Logf("local cluster: stopped; no component process left")
	return code
}

// Need returns the shared cluster, skipping the test when there is none (-short).
func Need(t testing.TB, c *Cluster) *Cluster {
	t.Helper()
	if c == nil {
		t.Skip("needs the local cluster (not started with -short)")
	}
	return c
}
