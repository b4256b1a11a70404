package drainedtest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// Test 1 of issue 40. Node a runs pod "db" with a CSI volume attached to the node
// (a VolumeAttachment made by hand) and a DaemonSet pod whose own volume is attached
// too. The drain evicts db; the test deletes db's attachment 8 s after db is gone. The
// node is not drained before that, the wait names the attachment (and not the
// DaemonSet's), and the DaemonSet's attachment, still there, does not hold the node.
// With --wait-for-volume-detach=false (node b, the same setup) the node is drained while
// the attachment stays.
func TestDrainedWaitsForTheVolumesOfThePodsItRemoved(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	e.AddNodes()
	for _, node := range e.Nodes {
		short := node[len(e.NS)+1:]
		attachedVolume(t, e, "db-"+short, node)
		attachedVolume(t, e, "agent-"+short, node)
		db := withClaim(fixture.PodTemplate("db-"+short, fixture.PodOptions{NodeName: node}), "db-"+short)
		pod := &corev1.Pod{ObjectMeta: db.ObjectMeta, Spec: db.Spec}
		pod.Name, pod.Namespace = "db-"+short, e.NS
		if _, err := e.C.CoreV1().Pods(e.NS).Create(e.Ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		agent := withClaim(fixture.PodTemplate("agent-"+short, fixture.PodOptions{NodeSelector: map[string]string{"kubernetes.io/hostname": node}}), "agent-"+short)
		ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent-" + short, Namespace: e.NS},
			Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: agent.Labels}, Template: agent}}
		if _, err := e.C.AppsV1().DaemonSets(e.NS).Create(e.Ctx, ds, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.Ready("db-"+short, 1)
		e.Ready("agent-"+short, 1)
	}
	a, b := e.Nodes[0], e.Nodes[1]

	// Node a: db's attachment deleted 8 s after db is gone.
	var mu sync.Mutex
	var goneAt, detachedAt time.Time
	ctx, cancel := context.WithCancel(e.Ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			_, err := e.C.CoreV1().Pods(e.NS).Get(ctx, "db-a", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		mu.Lock()
		goneAt = time.Now()
		mu.Unlock()
		select {
		case <-time.After(8 * time.Second):
		case <-ctx.Done():
			return
		}
		if err := e.C.StorageV1().VolumeAttachments().Delete(ctx, "csi-"+e.NS+"-db-a", metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
		mu.Lock()
		detachedAt = time.Now()
		mu.Unlock()
	}()
	r := e.Run("drain", a, "--force", "--ignore-daemonsets", "--timeout", "2m", "-o", "json")
	wg.Wait()
	if r.Code != 0 {
		t.Fatalf("drain %s: exit %d", a, r.Code)
	}
	evs := fixture.NDJSON(t, r.Stdout)
	drained := timeOf(t, fixture.FirstEvent(evs, "node.drained", ""))
	wait := fixture.FirstEvent(evs, "node.waiting", "")
	if wait == nil {
		t.Fatal("no node.waiting event")
	}
	msg, _ := wait["message"].(string)
	mustContain(t, "node.waiting", msg, "node/"+a+" waits for 1 volume(s) to detach: "+e.NS+"-db-a (VolumeAttachment csi-"+e.NS+"-db-a)")
	if strings.Contains(msg, "agent") {
		t.Errorf("the wait names the DaemonSet's volume: %q", msg)
	}
	if drained.Before(detachedAt) {
		t.Errorf("node %s drained at %s, before db's attachment was deleted at %s", a, drained.Format(time.RFC3339Nano), detachedAt.Format(time.RFC3339Nano))
	}
	t.Logf("figures: db gone at %s, its attachment deleted %s later, node drained %s after that",
		goneAt.Format(time.RFC3339Nano), detachedAt.Sub(goneAt).Round(time.Millisecond), drained.Sub(detachedAt).Round(time.Millisecond))

	t.Run("with --wait-for-volume-detach=false the node is drained while the attachment stays", func(t *testing.T) {
		r := e.Run("drain", b, "--force", "--ignore-daemonsets", "--wait-for-volume-detach=false", "--timeout", "2m", "-o", "json")
		if r.Code != 0 {
			t.Fatalf("drain %s: exit %d", b, r.Code)
		}
		if w := fixture.FirstEvent(fixture.NDJSON(t, r.Stdout), "node.waiting", ""); w != nil {
			t.Errorf("node.waiting with the wait off: %v", w)
		}
		if _, err := e.C.StorageV1().VolumeAttachments().Get(e.Ctx, "csi-"+e.NS+"-db-b", metav1.GetOptions{}); err != nil {
			t.Errorf("db's attachment on %s: %v, want it still there", b, err)
		}
	})
}
