package drain

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	kubectldrain "k8s.io/kubectl/pkg/drain"
)

// nodeNameIndex indexes the shared pod informer by spec.nodeName.
const nodeNameIndex = "spec.nodeName"

// indexer is the shared informer's indexer once synced, nil when the run has none (yet).
func (s *sharedPods) indexer() cache.Indexer {
	if p := s.synced.Load(); p != nil {
		return *p
	}
	return nil
}

// List returns the pods bound to the node.
func (v nodeView) List() []any {
	objs, _ := v.ByIndex(nodeNameIndex, v.node)
	return objs
}

// GetByKey returns the pod of that key if it is bound to the node.
func (v nodeView) GetByKey(key string) (any, bool, error) {
	obj, ok, err := v.Indexer.GetByKey(key)
	if err != nil || !ok {
		return nil, false, err
	}
	if p, isPod := obj.(*corev1.Pod); !isPod || p.Spec.NodeName != v.node {
		return nil, false, nil
	}
	return obj, true, nil
}

// podsForDeletion runs kubectl's pod filters over the node's pods: from the shared
// informer when there is one (no list request), else from a list of the node's pods.
func (r *run) podsForDeletion(ns *nodeState, store cache.Store) (*kubectldrain.PodDeleteList, []error) {
	h := r.e.kubectlHelper(r.ctx)
	if r.pf != nil {
		h.Client = r.pf.daemonSets.client(h.Client) // the plan's list of DaemonSets
	}
	if v, ok := store.(nodeView); ok {
		h.Client = podsFrom{Interface: h.Client, pods: v.List()}
	}
	return h.GetPodsForDeletion(ns.name)
}

// CoreV1 serves the pod list from the held pods.
func (c podsFrom) CoreV1() corev1client.CoreV1Interface {
	return podsFromCore{CoreV1Interface: c.Interface.CoreV1(), pods: c.pods}
}

func (c podsFromCore) Pods(ns string) corev1client.PodInterface {
	return podsFromPods{PodInterface: c.CoreV1Interface.Pods(ns), pods: c.pods}
}

// List returns the held pods the label selector matches (the field selector, the node,
// is already applied). Shallow copies: kubectl's filters set Kind and APIVersion on
// their own copy and change nothing deeper, so the held pods stay as they were.
func (c podsFromPods) List(_ context.Context, o metav1.ListOptions) (*corev1.PodList, error) {
	sel, err := labels.Parse(o.LabelSelector)
	if err != nil {
		return nil, fmt.Errorf("parse label selector %q: %w", o.LabelSelector, err)
	}
	out := &corev1.PodList{}
	for _, obj := range c.pods {
		if p, ok := obj.(*corev1.Pod); ok && sel.Matches(labels.Set(p.Labels)) {
			out.Items = append(out.Items, *p)
		}
	}
	return out, nil
}

// budgetPods are the pods of namespace that sel selects: from the shared pod informer's
// cache when the run has one (read-only: the cache's own objects), else listed from the
// API server's watch cache.
func (r *run) budgetPods(ctx context.Context, namespace string, sel labels.Selector) ([]*corev1.Pod, error) {
	if idx := r.shared.indexer(); idx != nil {
		objs, err := idx.ByIndex(cache.NamespaceIndex, namespace)
		if err != nil {
			return nil, fmt.Errorf("pods of namespace %s from the cache: %w", namespace, err)
		}
		out := []*corev1.Pod{}
		for _, o := range objs {
			if p, ok := o.(*corev1.Pod); ok && sel.Matches(labels.Set(p.Labels)) {
				out = append(out, p)
			}
		}
		return out, nil
	}
	lctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	l, err := r.e.cfg.Client.CoreV1().Pods(namespace).List(lctx, metav1.ListOptions{LabelSelector: sel.String(), ResourceVersion: "0"})
	if err != nil {
		return nil, fmt.Errorf("list pods of namespace %s: %w", namespace, err)
	}
	out := make([]*corev1.Pod, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out, nil
}
