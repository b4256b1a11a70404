package drain

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// listPodsByNode lists every pod once (in pages of ChunkSize, as kubectl does) and keeps
// the ones bound to the named nodes, by node: a plan over many nodes costs one list
// instead of one per node. The pods are whole (kubectl's filters and the plan's warnings
// read their volumes), less their managed fields. Every other pod is kept too, trimmed as
// the run's shared pod informer keeps it, under the key "": that informer starts from this
// list (faststart.go), so it holds every pod, and the diagnosis reads a waiting budget's
// pods from it instead of listing them.
func (e *Engine) listPodsByNode(ctx context.Context, nodes map[string]bool) (map[string][]any, string, error) {
	out := make(map[string][]any, len(nodes))
	opts := metav1.ListOptions{Limit: e.cfg.ChunkSize}
	rv := ""
	for {
		list, err := e.cfg.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, opts)
		if err != nil {
			return nil, "", fmt.Errorf("list pods: %w", err)
		}
		if rv == "" {
			rv = list.ResourceVersion // every page is of the first page's snapshot
		}
		for i := range list.Items {
			if p := list.Items[i]; nodes[p.Spec.NodeName] {
				// A copy: a pointer into the page would keep the whole page alive. Without
				// managed fields, the bulk of a pod and of no use to the plan.
				p.ManagedFields = nil
				out[p.Spec.NodeName] = append(out[p.Spec.NodeName], &p)
			} else {
				trimmed, _ := trimPodKeepLocalStorage(&p)
				out[""] = append(out[""], trimmed)
			}
		}
		if list.Continue == "" {
			return out, rv, nil
		}
		opts.Continue = list.Continue
	}
}

// trimPodKeepLocalStorage is trimPod keeping the emptyDir volumes, which kubectl's
// local-storage filter reads when the shared informer's pods stand in for a pod list,
// and of the containers' statuses what the diagnosis reads when they stand in for a
// budget's pods (diagnose.WhyNotReady: name, image, restarts, why it waits).
func trimPodKeepLocalStorage(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	var local []corev1.Volume
	for _, v := range p.Spec.Volumes {
		if v.EmptyDir != nil {
			local = append(local, corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{EmptyDir: v.EmptyDir}})
		}
	}
	init, ctrs := waitingStatuses(p.Status.InitContainerStatuses), waitingStatuses(p.Status.ContainerStatuses)
	_, _ = trimPod(obj)
	p.Spec.Volumes = local
	p.Status.InitContainerStatuses, p.Status.ContainerStatuses = init, ctrs
	return p, nil
}

// waitingStatuses keeps of each container status its name, image, restarts and waiting
// state (nil when no container waits: a running pod's statuses cost nothing).
func waitingStatuses(in []corev1.ContainerStatus) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, cs := range in {
		if cs.State.Waiting != nil {
			out = append(out, corev1.ContainerStatus{Name: cs.Name, Image: cs.Image, RestartCount: cs.RestartCount,
				State: corev1.ContainerState{Waiting: cs.State.Waiting}})
		}
	}
	return out
}
