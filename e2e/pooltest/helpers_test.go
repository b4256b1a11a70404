package pooltest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// poolSpecYAML is a pool with the given maxUnavailable and taints ("key=value:Effect").
func poolSpecYAML(name, tier string, maxUnavailable int, taints ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: maintenance.kubectl-maintenance.io/v1alpha1\nkind: NodePool\nmetadata:\n  name: %s\nspec:\n  maxUnavailable: %d\n  labels:\n    example.com/tier: %s\n", name, maxUnavailable, tier)
	if len(taints) > 0 {
		b.WriteString("  taints:\n")
		for _, t := range taints {
			kv, effect, _ := strings.Cut(t, ":")
			k, v, _ := strings.Cut(kv, "=")
			fmt.Fprintf(&b, "  - key: %s\n    value: %q\n    effect: %s\n", k, v, effect)
		}
	}
	return b.String()
}

// unschedulablePeak watches the named nodes from now on and, when stop is called,
// returns the most of them that were unschedulable at any one moment.
func unschedulablePeak(e *fixture.Env, names []string) (stop func() int) {
	e.T.Helper()
	return peakOf(e, names, func(n *corev1.Node) bool { return n.Spec.Unschedulable })
}

// peakOf watches the named nodes from now on and, when stop is called, returns the most
// of them for which out held at any one moment.
func peakOf(e *fixture.Env, names []string, out func(*corev1.Node) bool) (stop func() int) {
	e.T.Helper()
	ctx, cancel := context.WithCancel(e.Ctx)
	list, err := e.C.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "test=" + e.NS})
	if err != nil {
		e.T.Fatal(err)
	}
	watched := map[string]bool{}
	for _, n := range names {
		watched[n] = true
	}
	state := map[string]bool{}
	peak := 0
	count := func() int {
		c := 0
		for _, u := range state {
			if u {
				c++
			}
		}
		return c
	}
	for _, n := range list.Items {
		if watched[n.Name] {
			state[n.Name] = out(&n)
		}
	}
	peak = count()
	w, err := e.C.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{LabelSelector: "test=" + e.NS, ResourceVersion: list.ResourceVersion})
	if err != nil {
		e.T.Fatal(err)
	}
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			n, ok := ev.Object.(*corev1.Node)
			if !ok || !watched[n.Name] || ev.Type == watch.Deleted {
				continue
			}
			mu.Lock()
			state[n.Name] = out(n)
			peak = max(peak, count())
			mu.Unlock()
		}
	}()
	return func() int {
		cancel()
		w.Stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

// ndjsonEvents parses the NDJSON lines of a -o json run (a killed run's partial output
// too: a torn last line is skipped).
func ndjsonEvents(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			out = append(out, ev)
		}
	}
	return out
}

// countEvents counts the events of a type per node, and per pod.
func countEvents(evs []map[string]any, typ string) (perNode, perPod map[string]int) {
	perNode, perPod = map[string]int{}, map[string]int{}
	for _, ev := range evs {
		if ev["type"] != typ {
			continue
		}
		n, _ := ev["node"].(string)
		p, _ := ev["pod"].(string)
		perNode[n]++
		perPod[p]++
	}
	return perNode, perPod
}

// oneLine fails the test unless s (stderr of a refused command) is one line.
func oneLine(t *testing.T, s string) {
	t.Helper()
	if lines := strings.Count(strings.TrimSpace(s), "\n"); lines != 0 {
		t.Errorf("the error is %d lines, want one:\n%s", lines+1, s)
	}
}

// ownTaints are a node's taints without the node lifecycle controller's
// (node.kubernetes.io/*: not-ready, unreachable and the like), which come and go with the
// kwok node's heartbeat under load and are neither a pool's nor a test's.
func ownTaints(n *corev1.Node) []corev1.Taint {
	var out []corev1.Taint
	for _, tn := range n.Spec.Taints {
		if !strings.HasPrefix(tn.Key, "node.kubernetes.io/") {
			out = append(out, tn)
		}
	}
	return out
}

// ownLabels are a node's labels without those the control plane adds on its own schedule
// (fixture.WithoutSystemKeys), which are neither a pool's nor a test's.
func ownLabels(n *corev1.Node) map[string]string { return fixture.WithoutSystemKeys(n.Labels) }
