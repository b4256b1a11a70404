package drain

import (
	"fmt"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// realisticPod carries what a real pod carries: managed fields, containers with env,
// volumes and statuses.
func realisticPod(i int) *corev1.Pod {
	env := make([]corev1.EnvVar, 20)
	for j := range env {
		env[j] = corev1.EnvVar{Name: fmt.Sprintf("VAR_%d", j), Value: "some-configuration-value-of-moderate-length"}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%05d", i), Namespace: "ns", UID: "uid",
			Labels: map[string]string{"app": "web", "pod-template-hash": "abcdef"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: "Update",
				FieldsV1: metav1.NewFieldsV1(string(make([]byte, 2048)))}, {Manager: "kwok", Operation: "Update", FieldsV1: metav1.NewFieldsV1(string(make([]byte, 1024)))}}},
		Spec: corev1.PodSpec{NodeName: "node", Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/team/app:v1.2.3", Env: env},
			{Name: "sidecar", Image: "registry.example.com/proxy:v9", Env: env[:5]}},
			Volumes: []corev1.Volume{{Name: "token"}, {Name: "config"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: "x", ImageID: "sha256:0123456789abcdef"}, {Name: "sidecar"}}},
	}
}

func heapMiB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// BenchmarkPodCache30k reports the heap an informer store of 30,000 pods holds, with the
// engine's transform (trimPod) and without.
func BenchmarkPodCache30k(b *testing.B) {
	for _, trim := range []bool{false, true} {
		b.Run(fmt.Sprintf("trim=%v", trim), func(b *testing.B) {
			for b.Loop() {
				before := heapMiB()
				store := cache.NewStore(cache.MetaNamespaceKeyFunc)
				for i := range 30000 {
					var obj any = realisticPod(i)
					if trim {
						obj, _ = trimPod(obj)
					}
					_ = store.Add(obj)
				}
				b.ReportMetric(heapMiB()-before, "MiB")
				runtime.KeepAlive(store)
			}
		})
	}
}
