package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// options shape one run of the demo.
type options struct {
	// plugin is the built kubectl-maintenance; kubeconfig the cluster's, as every command gets it.
	plugin, kubeconfig string
	// short leaves out the slow steps (the test's form): the drain in waves, the
	// uncordon and the side by side stay.
	short bool
	// json runs the drains with -o json and keeps their NDJSON (the test reads it).
	json bool
	// out receives everything the demo prints.
	out io.Writer
}

// demo is one run of the demo against a running local cluster.
type demo struct {
	options
	c *cluster.Cluster
	// ran are the commands run so far, in order.
	ran []result
	// side is what the side by side measured.
	side sideBySide
}

// step is one command of the demo.
type step struct {
	args []string
	note string
	// want is the exit code the command must end with; any other fails the demo.
	want int
	// kubectl runs the pinned kubectl instead of the plugin.
	kubectl bool
	// json marks a drain of the plugin: with options.json it runs with -o json.
	json bool
	// slow steps are left out of the short form.
	slow bool
}

// result is one command run.
type result struct {
	step
	code    int
	elapsed time.Duration
	// stdout is kept with options.json only (otherwise it goes straight to the terminal,
	// where the plugin shows its live progress).
	stdout string
}

// run creates the demo's workloads and runs its steps, in order.
func (d *demo) run(ctx context.Context) error {
	d.say("creating the demo: 6 kwok nodes in pools blue and green, Deployments web/api/cart/ledger, StatefulSet db, DaemonSet node-agent, one PDB each (pdb shop/ledger never allows a disruption)")
	began := time.Now()
	setupCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := fixture.Demo(setupCtx, d.c.Client); err != nil {
		return err
	}
	d.say("demo ready in %s", time.Since(began).Round(time.Millisecond))
	if err := d.steps(ctx, blueSteps); err != nil {
		return err
	}
	if !d.short {
		// The pools first: the surge step's drain would leave green-1 empty, and the move
		// is to evict pods.
		if err := d.steps(ctx, poolSteps); err != nil {
			return err
		}
		if err := d.surge(ctx); err != nil {
			return err
		}
		if err := d.serverSide(ctx); err != nil {
			return err
		}
	}
	return d.sideBySide(ctx)
}

// blueSteps drain pool blue's nodes in waves, show the budget that never allows, and
// restore the nodes.
var blueSteps = []step{
	{args: []string{"version"}, slow: true},
	{args: []string{"nodes"}, note: "every node, its pools (node-role.kubernetes.io/<pool>) and pod count"},
	{args: []string{"plan", "-l", "node-role.kubernetes.io/blue", "--ignore-daemonsets"}, want: 3,
		note: "the preflight: waves per budget, the ETA, and the PDB that can never allow a disruption (exit 3)"},
	{args: []string{"drain", "blue-1", "blue-2", "--ignore-daemonsets"}, json: true,
		note: "a real drain of two nodes at once, in waves: the ETA first, then every wait names its PDB and numbers, retries follow the PDB's status (a watch); the summary says expected against actual"},
	{args: []string{"drain", "blue-3", "--ignore-daemonsets", "--timeout", "15s"}, want: 124, slow: true,
		note: "blue-3 holds the pods of pdb shop/ledger (maxUnavailable 0): the drain evicts the rest, then times out naming it (exit 124)"},
	{args: []string{"drain", "blue-3", "--ignore-daemonsets", "--on-blocked=skip", "--blocked-after", "5s"}, want: 3, slow: true,
		note: "the same node with --on-blocked=skip: given up after 5 s blocked, left cordoned in state blocked, exit 3"},
	{args: []string{"status"}, slow: true, note: "every node the tool touched, from the cluster alone: state, since, who, pods left and what blocks each"},
	{args: []string{"nodes", "-l", "node-role.kubernetes.io/blue"}, slow: true},
	{args: []string{"uncordon", "-l", "node-role.kubernetes.io/blue"}, note: "restore the nodes as they were before the tool touched them"},
}

// poolSteps put the nodes in NodePools, move a node that carries pods between pools, and
// drain a pool rolling within its maxUnavailable.
var poolSteps = []step{
	{args: []string{"install"}, note: "the NodePool and Maintenance CRDs (idempotent)"},
	{args: []string{"pool", "apply", "-f", "config/samples/pool-blue.yaml"}, note: "labels, taints and a RuntimeClass for pool blue, applied to its nodes"},
	{args: []string{"pool", "apply", "-f", "config/samples/pool-green.yaml"}},
	{args: []string{"pool", "list"}},
	{args: []string{"pool", "move", "green-1", "--to", "blue", "--ignore-daemonsets"},
		note: "cordon, PDB-aware drain, swap green's labels and taints for blue's (exactly what each pool applied), uncordon"},
	{args: []string{"nodes"}},
	{args: []string{"drain", "--pool", "green", "--ignore-daemonsets"},
		note: "a rolling drain of pool green (green-2 and green-3 since the move): its maxUnavailable 1 node at a time, each in waves"},
	{args: []string{"uncordon", "--pool", "green"}},
}

// steps runs the steps in order, leaving out the slow ones in the short form.
func (d *demo) steps(ctx context.Context, steps []step) error {
	for _, s := range steps {
		if d.short && s.slow {
			continue
		}
		if _, err := d.cmd(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// cmd runs one command of the demo: it prints the command line and the note, then the
// command's output and its exit code, and fails when the code is not the one wanted.
func (d *demo) cmd(ctx context.Context, s step) (result, error) {
	bin, name := d.plugin, "kubectl maintenance"
	if s.kubectl {
		bin, name = filepath.Join(d.c.BinDir, "kubectl"), "kubectl"
	}
	args := s.args
	if s.json && d.json {
		args = append(slices.Clone(args), "-o", "json")
	}
	fmt.Fprintf(d.out, "\n$ %s %s\n", name, strings.Join(args, " "))
	if s.note != "" {
		fmt.Fprintf(d.out, "# %s\n", s.note)
	}
	if ctx.Err() != nil {
		return result{}, ctx.Err()
	}
	c := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", d.kubeconfig}, args...)...)
	var stdout, stderr bytes.Buffer
	if d.json {
		c.Stdout, c.Stderr = &stdout, &stderr
	} else {
		c.Stdout, c.Stderr = d.out, d.out
	}
	began := time.Now()
	err := c.Run()
	r := result{step: s, elapsed: time.Since(began), stdout: stdout.String()}
	_, _ = d.out.Write(stdout.Bytes())
	_, _ = d.out.Write(stderr.Bytes())
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		return r, fmt.Errorf("run %s: %w", bin, err)
	}
	fmt.Fprintf(d.out, "# exit code %d\n", r.code)
	d.ran = append(d.ran, r)
	if r.code != s.want {
		return r, fmt.Errorf("%s %s: exit code %d, want %d", name, strings.Join(args, " "), r.code, s.want)
	}
	return r, nil
}

// surge drains the node of a one-replica Deployment under a budget that never allows,
// with --surge, and uncordons it; then deletes the Deployment, which would hold every
// later drain of its node.
func (d *demo) surge(ctx context.Context) error {
	d.say("creating Deployment shop/checkout: one replica, kept on pool green's nodes, under pdb checkout (minAvailable 1: never allows a disruption)")
	setupCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	pod, err := fixture.DemoOneReplica(setupCtx, d.c.Client)
	if err != nil {
		return err
	}
	node := pod.Spec.NodeName
	d.say("pod shop/%s runs on %s", pod.Name, node)
	if _, err := d.cmd(ctx, step{args: []string{"drain", node, "--ignore-daemonsets", "--surge"},
		note: "--surge: the Deployment is scaled to 2, the new pod starts on another node of pool green, then the old one is evicted through the Eviction API and the count restored"}); err != nil {
		return err
	}
	if err := d.sayCheckout(ctx); err != nil {
		return err
	}
	if _, err := d.cmd(ctx, step{args: []string{"uncordon", node},
		note: "the node schedulable again; uncordon also restores the count of a surge still recorded for the node (a drain killed mid-surge)"}); err != nil {
		return err
	}
	if err := d.sayCheckout(ctx); err != nil {
		return err
	}
	d.say("deleting shop/checkout and its budget (any later drain of its node would wait on it)")
	cs := d.c.Client
	if err := cs.AppsV1().Deployments(fixture.DemoNamespace).Delete(setupCtx, "checkout", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
		return err
	}
	if err := cs.PolicyV1().PodDisruptionBudgets(fixture.DemoNamespace).Delete(setupCtx, "checkout", metav1.DeleteOptions{}); err != nil {
		return err
	}
	_, err = fixture.WaitPods(setupCtx, cs, fixture.DemoNamespace, "app=checkout", func(ps []*corev1.Pod) bool { return len(ps) == 0 })
	return err
}

// sayCheckout says the replica count of shop/checkout and where its pods run.
func (d *demo) sayCheckout(ctx context.Context) error {
	ns := fixture.DemoNamespace
	dep, err := d.c.Client.AppsV1().Deployments(ns).Get(ctx, "checkout", metav1.GetOptions{})
	if err != nil {
		return err
	}
	pods, err := d.c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=checkout"})
	if err != nil {
		return err
	}
	var where []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			where = append(where, p.Name+" on "+p.Spec.NodeName)
		}
	}
	d.say("deployment %s/checkout: spec.replicas %d; pods %s", ns, ptr.Deref(dep.Spec.Replicas, 1), strings.Join(where, ", "))
	return nil
}

func (d *demo) say(format string, args ...any) {
	fmt.Fprintf(d.out, "==> "+format+"\n", args...)
}
