package main

import (
	"context"
	"fmt"
	"os/exec"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// serverSide starts the controller as a local process against the demo cluster and runs
// a drain --server-side that it carries out, followed from the CLI, on the demo node that
// holds the most pods now.
func (d *demo) serverSide(ctx context.Context) error {
	node, err := d.busiest(ctx)
	if err != nil {
		return err
	}
	d.say("starting `kubectl maintenance controller` as a local process (NodePools and Maintenances, leader election on a Lease in kube-system)")
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ctl := exec.CommandContext(cctx, d.plugin, "--kubeconfig", d.kubeconfig, "controller", "--health-probe-bind-address=0")
	if err := ctl.Start(); err != nil {
		return fmt.Errorf("start the controller: %w", err)
	}
	defer func() {
		cancel()
		_ = ctl.Wait()
	}()
	return d.steps(ctx, []step{
		{args: []string{"drain", node, "--ignore-daemonsets", "--server-side", "--name", "demo-" + node},
			note: node + " holds the most pods now: a Maintenance object the controller drains, followed from here"},
		{args: []string{"get", "-o", "wide"}},
		{args: []string{"uncordon", node}},
	})
}

// busiest is the demo node with the most pods of the demo's namespace (DaemonSet pods
// aside), leaving out nodes that hold a pod of pdb ledger, which never allows.
func (d *demo) busiest(ctx context.Context) (string, error) {
	pods, err := d.c.Client.CoreV1().Pods(fixture.DemoNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	count, frozen := map[string]int{}, map[string]bool{}
	for _, p := range pods.Items {
		switch p.Labels["app"] {
		case "node-agent":
		case "ledger":
			frozen[p.Spec.NodeName] = true
		default:
			count[p.Spec.NodeName]++
		}
	}
	var nodes []string
	for _, pool := range []string{"blue", "green"} {
		for _, n := range fixture.DemoPools[pool] {
			if !frozen[n] {
				nodes = append(nodes, n)
			}
		}
	}
	sort.SliceStable(nodes, func(i, j int) bool { return count[nodes[i]] > count[nodes[j]] })
	if len(nodes) == 0 {
		return "", fmt.Errorf("no demo node without a pod of pdb ledger")
	}
	return nodes[0], nil
}
