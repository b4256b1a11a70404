// Command demo brings up the local cluster (e2e/cluster), creates the demo workloads
// (e2e/fixture.Demo) and runs kubectl-maintenance against them, printing each command
// before its output; it ends with the same drain done by our plugin and by kubectl drain
// on twin workloads, both wall times on one line. With -short it leaves out the slow
// steps; with -keep it then stays up until Ctrl-C, printing how to point kubectl and the
// plugin at the cluster.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
)

func main() {
	plugin := flag.String("plugin", "bin/kubectl-maintenance", "path of the built plugin")
	keep := flag.Bool("keep", false, "keep the cluster up until Ctrl-C")
	short := flag.Bool("short", false, "leave out the slow steps: the drain in waves, uncordon and the side by side only")
	kubeconfigOut := flag.String("kubeconfig-out", ".local/kubeconfig", "where to copy the cluster's kubeconfig")
	flag.Parse()
	if err := run(*plugin, *keep, *short, *kubeconfigOut); err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}

func run(plugin string, keep, short bool, kubeconfigOut string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	plugin, err := filepath.Abs(plugin)
	if err != nil {
		return err
	}
	d := &demo{options: options{plugin: plugin, short: short, out: os.Stdout}}
	d.say("starting the local cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok)")
	c, err := cluster.Start(ctx, cluster.Options{Logf: d.say})
	if err != nil {
		return err
	}
	defer c.Stop()
	if err := os.MkdirAll(filepath.Dir(kubeconfigOut), 0o700); err != nil {
		return err
	}
	kc, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		return err
	}
	if err := os.WriteFile(kubeconfigOut, kc, 0o600); err != nil {
		return err
	}
	kubeconfig, _ := filepath.Abs(kubeconfigOut)
	d.c, d.kubeconfig = c, kubeconfig
	if err := d.run(ctx); err != nil {
		return err
	}

	fmt.Printf("\nThe cluster's kubeconfig: %s\n", kubeconfig)
	fmt.Printf("  export KUBECONFIG=%s\n  kubectl get nodes\n  %s nodes\n", kubeconfig, plugin)
	if !keep {
		fmt.Println("Stopping the cluster (run `make cluster` to keep one up until Ctrl-C).")
		return nil
	}
	fmt.Println("The cluster stays up until you press Ctrl-C.")
	<-ctx.Done()
	fmt.Println("\nstopping the cluster")
	return nil
}
