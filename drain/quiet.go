package drain

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// When is a node drained. Once its last pod is gone, a node is recorded drained only
// after two waits, both bounded by the run's timeout:
//
//   - the settle (Settings.Settle, Karpenter's 5 s after its taint): not before Settle
//     after its drain started (its cordon), then a last look at its pods, read from the
//     API server, not the informer: a pod the scheduler bound from a cache that had not
//     seen the cordon is found and evicted, and the node waits for it;
//   - the volumes (Settings.WaitForVolumeDetach): until no VolumeAttachment of the node
//     refers to a PersistentVolume a pod this drain removed used (pods that stay, such as
//     DaemonSet pods, do not count), so that drained means the node may be powered off.
//
// The wait is said once (EventNodeWaiting), naming the volumes and their attachments.

// volumePoll is how often the volume wait reads the attachments' informer again (a
// local cache: no request).
const volumePoll = 250 * time.Millisecond

// removedClaimsLocked are the PersistentVolumeClaims ("namespace/name") of the pods this
// drain removed from the node, sorted.
func removedClaimsLocked(ns *nodeState) []string {
	set := map[string]bool{}
	for _, st := range ns.byUID {
		for _, v := range st.pod.Spec.Volumes {
			switch {
			case v.PersistentVolumeClaim != nil:
				set[st.pod.Namespace+"/"+v.PersistentVolumeClaim.ClaimName] = true
			case v.Ephemeral != nil: // a generic ephemeral volume's claim is <pod>-<volume>
				set[st.pod.Namespace+"/"+st.pod.Name+"-"+v.Name] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// waitInStore waits (up to 5 s) until the node's informer has p.
func (r *run) waitInStore(ctx context.Context, ns *nodeState, p *corev1.Pod) {
	for range 50 {
		r.lock()
		_, ok, _ := ns.store.GetByKey(p.Namespace + "/" + p.Name)
		r.unlock()
		if ok {
			return
		}
		select {
		case <-r.e.cfg.Clock.After(100 * time.Millisecond):
		case <-ctx.Done():
			return
		}
	}
}

// waitVolumes waits until no VolumeAttachment of the node refers to the volumes of claims.
func (r *run) waitVolumes(ctx context.Context, ns *nodeState, claims []string) error {
	pvs := map[string]bool{}
	for _, k := range claims {
		namespace, name, _ := strings.Cut(k, "/")
		pvc, err := r.e.cfg.Client.CoreV1().PersistentVolumeClaims(namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			continue // deleted with its pod: its volume, if attached, is found by nothing here
		case err != nil:
			return fmt.Errorf("get persistentvolumeclaim %s: %w", k, err)
		}
		if pvc.Spec.VolumeName != "" {
			pvs[pvc.Spec.VolumeName] = true
		}
	}
	if len(pvs) == 0 {
		return nil
	}
	store, err := r.attachments(ctx)
	if err != nil {
		return err
	}
	said := ""
	for {
		left := attachedOn(store, ns.name, pvs)
		if len(left) == 0 {
			return nil
		}
		if msg := volumeWaitMessage(ns.name, left); msg != said {
			said = msg
			r.e.emit(event.Event{Type: event.EventNodeWaiting, Node: ns.name, Reason: ReasonVolumeDetach, Message: msg})
		}
		select {
		case <-r.e.cfg.Clock.After(volumePoll):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ReasonVolumeDetach is the Reason of the EventNodeWaiting of a node whose volumes are
// still attached.
const ReasonVolumeDetach = "VolumeDetach"

// attachedOn lists the attachments of store on node to a volume of pvs, by volume.
func attachedOn(store cache.Store, node string, pvs map[string]bool) []attachment {
	var out []attachment
	for _, obj := range store.List() {
		va, ok := obj.(*storagev1.VolumeAttachment)
		if !ok || va.Spec.NodeName != node || va.Spec.Source.PersistentVolumeName == nil {
			continue
		}
		if pv := *va.Spec.Source.PersistentVolumeName; pvs[pv] {
			out = append(out, attachment{pv: pv, name: va.Name})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pv+"/"+out[i].name < out[j].pv+"/"+out[j].name })
	return out
}

// volumeWaitMessage says the wait: "node/n1 waits for 2 volume(s) to detach: pv-a
// (VolumeAttachment csi-1), pv-b (VolumeAttachment csi-2)".
func volumeWaitMessage(node string, left []attachment) string {
	parts := make([]string, len(left))
	vols := map[string]bool{}
	for i, a := range left {
		parts[i] = fmt.Sprintf("%s (VolumeAttachment %s)", a.pv, a.name)
		vols[a.pv] = true
	}
	return fmt.Sprintf("node/%s waits for %d volume(s) to detach: %s", node, len(vols), strings.Join(parts, ", "))
}

// attachments is the run's VolumeAttachment informer, started on first use.
func (r *run) attachments(ctx context.Context) (cache.Store, error) {
	r.vaOnce.Do(func() {
		f := informers.NewSharedInformerFactoryWithOptions(r.e.cfg.Client, 0, informers.WithTransform(trimManagedFields))
		inf := f.Storage().V1().VolumeAttachments().Informer()
		r.goroutine(func() { inf.RunWithContext(r.ctx) })
		r.vaInf = inf
	})
	if !cache.WaitForCacheSync(ctx.Done(), r.vaInf.HasSynced) {
		return nil, fmt.Errorf("watch volumeattachments: %w", ctx.Err())
	}
	return r.vaInf.GetStore(), nil
}
