// Command demo brings up the local cluster (e2e/cluster), creates the demo workloads
// (e2e/fixture.Demo) and runs kubectl-maintenance against them, printing each command
// before its output. With -keep it then stays up until Ctrl-C, printing how to point
// kubectl and the plugin at the cluster.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

func main() {
	plugin := flag.String("plugin", "bin/kubectl-maintenance", "path of the built plugin")
	keep := flag.Bool("keep", false, "keep the cluster up until Ctrl-C")
	kubeconfigOut := flag.String("kubeconfig-out", ".local/kubeconfig", "where to copy the cluster's kubeconfig")
	flag.Parse()
	if err := run(*plugin, *keep, *kubeconfigOut); err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}

func run(plugin string, keep bool, kubeconfigOut string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	plugin, err := filepath.Abs(plugin)
	if err != nil {
		return err
	}
	say("starting the local cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok)")
	c, err := cluster.Start(ctx, cluster.Options{Logf: func(f string, a ...any) { say(f, a...) }})
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

	say("creating the demo: 6 kwok nodes in pools blue and green, Deployments web/api/cart/ledger, StatefulSet db, DaemonSet node-agent, one PDB each (pdb shop/ledger never allows a disruption)")
	began := time.Now()
	setupCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := fixture.Demo(setupCtx, c.Client); err != nil {
		return err
	}
	say("demo ready in %s", time.Since(began).Round(time.Millisecond))

	for _, step := range demoSteps {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		args := append([]string{"--kubeconfig", kubeconfig}, step.args...)
		fmt.Printf("\n$ kubectl maintenance %s\n", strings.Join(step.args, " "))
		if step.note != "" {
			fmt.Printf("# %s\n", step.note)
		}
		cmd := exec.CommandContext(ctx, plugin, args...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stdout
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			return fmt.Errorf("run %s: %w", plugin, err)
		}
		fmt.Printf("# exit code %d\n", code)
	}
	if err := serverSideDrain(ctx, plugin, kubeconfig); err != nil {
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

// demoSteps are the plugin invocations the demo runs, in order.
var demoSteps = []struct {
	args []string
	note string
}{
	{[]string{"version"}, ""},
	{[]string{"nodes"}, "every node, its pools (node-role.kubernetes.io/<pool>) and pod count"},
	{[]string{"plan", "-l", "node-role.kubernetes.io/blue", "--ignore-daemonsets"},
		"the preflight: waves per budget, and the PDB that can never allow a disruption (exit 3)"},
	{[]string{"drain", "blue-1", "blue-2", "--ignore-daemonsets"},
		"a real drain of two nodes at once, in waves: the ETA first, then every wait names its PDB and numbers, retries follow the PDB's status (a watch); the summary says expected against actual"},
	{[]string{"drain", "blue-3", "--ignore-daemonsets", "--timeout", "15s"},
		"blue-3 holds the pods of pdb shop/ledger (maxUnavailable 0): the drain evicts the rest, then times out naming it (exit 124)"},
	{[]string{"drain", "blue-3", "--ignore-daemonsets", "--on-blocked=skip", "--blocked-after", "5s"},
		"the same node with --on-blocked=skip: given up after 5 s blocked, left cordoned in state blocked, exit 3"},
	{[]string{"status"}, "every node the tool touched, from the cluster alone: state, since, who, pods left and what blocks each"},
	{[]string{"nodes", "-l", "node-role.kubernetes.io/blue"}, ""},
	{[]string{"uncordon", "-l", "node-role.kubernetes.io/blue"}, "restore the nodes as they were before the tool touched them"},
	{[]string{"install"}, "the NodePool and Maintenance CRDs (idempotent)"},
	{[]string{"pool", "apply", "-f", "config/samples/pool-blue.yaml"}, "labels, taints and a RuntimeClass for pool blue, applied to its nodes"},
	{[]string{"pool", "apply", "-f", "config/samples/pool-green.yaml"}, ""},
	{[]string{"pool", "list"}, ""},
	{[]string{"pool", "move", "green-1", "--to", "blue", "--ignore-daemonsets"},
		"cordon, PDB-aware drain, swap green's labels and taints for blue's (exactly what each pool applied), uncordon"},
	{[]string{"nodes"}, ""},
}

func say(format string, args ...any) {
	fmt.Printf("==> "+format+"\n", args...)
}
