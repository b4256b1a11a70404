package drainedtest

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// timeOf is an event's ts.
func timeOf(t *testing.T, ev map[string]any) time.Time {
	t.Helper()
	if ev == nil {
		t.Fatal("no such event")
	}
	ts, err := time.Parse(time.RFC3339Nano, ev["ts"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// attachedVolume makes a CSI PersistentVolume name, its claim name (bound to it) and a
// VolumeAttachment of it to node, made by hand as an attacher would.
func attachedVolume(t *testing.T, e *fixture.Env, name, node string) {
	t.Helper()
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: e.NS + "-" + name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              "",
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: e.NS, Name: name},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: name}},
		},
	}
	if _, err := e.C.CoreV1().PersistentVolumes().Create(e.Ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	empty := ""
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.NS},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			StorageClassName: &empty,
			VolumeName:       pv.Name,
		},
	}
	if _, err := e.C.CoreV1().PersistentVolumeClaims(e.NS).Create(e.Ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pvName := pv.Name
	va := &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: "csi-" + pv.Name},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com", NodeName: node,
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pvName}},
	}
	if _, err := e.C.StorageV1().VolumeAttachments().Create(e.Ctx, va, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = e.C.StorageV1().VolumeAttachments().Delete(ctx, va.Name, metav1.DeleteOptions{})
		_ = e.C.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{})
	})
}

// withClaim mounts claim name into the pod template.
func withClaim(t corev1.PodTemplateSpec, name string) corev1.PodTemplateSpec {
	t.Spec.Volumes = append(t.Spec.Volumes, corev1.Volume{Name: "data",
		VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}})
	t.Spec.Containers[0].VolumeMounts = append(t.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "data", MountPath: "/data"})
	return t
}
