package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// serverSideDrain is the demo's last step: the controller started as a local process
// against the demo cluster, and a drain --server-side it runs, followed from the CLI.
func serverSideDrain(ctx context.Context, plugin, kubeconfig string) error {
	say("starting `kubectl maintenance controller` as a local process (NodePools and Maintenances, leader election on a Lease in kube-system)")
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ctl := exec.CommandContext(cctx, plugin, "--kubeconfig", kubeconfig, "controller", "--health-probe-bind-address=0")
	if err := ctl.Start(); err != nil {
		return fmt.Errorf("start the controller: %w", err)
	}
	defer func() {
		cancel()
		_ = ctl.Wait()
	}()
	for _, step := range [][]string{
		{"drain", "green-2", "--ignore-daemonsets", "--server-side", "--name", "demo-green-2"},
		{"get", "-o", "wide"},
		{"uncordon", "green-2"},
	} {
		fmt.Printf("\n$ kubectl maintenance %s\n", strings.Join(step, " "))
		cmd := exec.CommandContext(ctx, plugin, append([]string{"--kubeconfig", kubeconfig}, step...)...)
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
	return nil
}
