package drain

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// The volume wait counts the attachments of the node to the volumes of the removed pods,
// and says them by volume and attachment.
func TestAttachedOn(t *testing.T) {
	va := func(name, node, pv string) *storagev1.VolumeAttachment {
		a := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: storagev1.VolumeAttachmentSpec{NodeName: node}}
		if pv != "" {
			a.Spec.Source.PersistentVolumeName = ptr.To(pv)
		}
		return a
	}
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	for _, a := range []*storagev1.VolumeAttachment{va("csi-b", "n1", "pv-b"), va("csi-a", "n1", "pv-a"),
		va("csi-other-node", "n2", "pv-a"), va("csi-kept", "n1", "pv-daemonset"), va("csi-inline", "n1", "")} {
		if err := store.Add(a); err != nil {
			t.Fatal(err)
		}
	}
	for name, tc := range map[string]struct {
		pvs  map[string]bool
		want string
	}{
		"two removed volumes still attached, in order": {map[string]bool{"pv-a": true, "pv-b": true},
			"node/n1 waits for 2 volume(s) to detach: pv-a (VolumeAttachment csi-a), pv-b (VolumeAttachment csi-b)"},
		"a volume attached elsewhere or to a pod that stays does not count": {map[string]bool{"pv-c": true}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			left := attachedOn(store, "n1", tc.pvs)
			got := ""
			if len(left) > 0 {
				got = volumeWaitMessage("n1", left)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// The claims of the removed pods: their PersistentVolumeClaims and the claims of their
// generic ephemeral volumes (<pod>-<volume>), each once, sorted; not their emptyDirs.
func TestRemovedClaims(t *testing.T) {
	pod := func(name string, vols ...corev1.Volume) *podState {
		return &podState{pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"}, Spec: corev1.PodSpec{Volumes: vols}}}
	}
	claim := func(n string) corev1.Volume {
		return corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: n}}}
	}
	ns := &nodeState{byUID: map[types.UID]*podState{
		"1": pod("db-0", claim("data-db-0")),
		"2": pod("db-1", claim("data-db-0")),
		"3": pod("cache", corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}}),
		"4": pod("web", corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}),
	}}
	got := removedClaimsLocked(ns)
	want := []string{"shop/cache-scratch", "shop/data-db-0"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("removedClaimsLocked = %v, want %v", got, want)
	}
}
