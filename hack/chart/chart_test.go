package chart

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// root is the repository's root (this module lives in hack/chart).
var root = filepath.Join("..", "..")

// The chart, the plugin and the kustomize base are one install: for the same settings
// (namespace, image) the chart rendered by Helm's SDK holds the very objects `kubectl
// maintenance install --controller --dry-run=client -o yaml` prints, and `kubectl
// kustomize config/default` (the pinned kubectl) the default ones; Helm's own labels and
// the CRDs' keep annotation aside. The chart lints clean (strict) with every value set.
func TestChartEqualsThePluginAndTheKustomizeBase(t *testing.T) {
	plugin := buildPlugin(t)
	cases := []struct {
		name   string
		ns     string
		sets   []string
		plugin []string
	}{
		{"default values in kube-system", "kube-system", nil, nil},
		{"another namespace and image", "maintenance-system",
			[]string{"image.repository=registry.example/kubectl-maintenance", "image.tag=v9.8.7"},
			[]string{"-n", "maintenance-system", "--image", "registry.example/kubectl-maintenance:v9.8.7"}},
	}
	var defaults map[string]map[string]any
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vals, err := Values(tc.sets...)
			if err != nil {
				t.Fatal(err)
			}
			// The repository's chart says appVersion dev, as config/manager's image tag.
			rendered := render(t, tc.ns, vals)
			want := decode(t, "install --dry-run", run(t, plugin, append([]string{"install", "--controller", "--dry-run=client", "-o", "yaml"}, tc.plugin...)...))
			same(t, "the chart", rendered, "install --controller", want)
			if tc.sets == nil {
				defaults = want
			}
		})
	}
	t.Run("kubectl kustomize config/default", func(t *testing.T) {
		if defaults == nil {
			t.Skip("the default case failed")
		}
		got := decode(t, "kubectl kustomize", run(t, kubectl(t), "kustomize", filepath.Join(root, "config", "default")))
		same(t, "kubectl kustomize config/default", got, "install --controller", defaults)
	})
}

// Values besides the plugin's settings: each renders what it says, and the chart lints
// clean (strict) with them.
func TestChartValues(t *testing.T) {
	all := []string{"replicas=3", "leaderElection.leaseDuration=30s", "leaderElection.renewDeadline=20s", "leaderElection.retryPeriod=4s",
		"nodeSelector.pool=infra", "tolerations[0].key=infra", "tolerations[0].operator=Exists", "extraArgs[0]=--rollout",
		"metrics.podMonitor.enabled=true", "metrics.podMonitor.labels.release=prom", "resources.limits.memory=512Mi",
		"admissionPolicy.enabled=false", "userRoles.enabled=false", "crds.keep=false", "podDisruptionBudget.enabled=false"}
	cases := []struct {
		name string
		sets []string
		ok   func(t *testing.T, objs map[string]map[string]any)
	}{
		{"defaults", nil, func(t *testing.T, objs map[string]map[string]any) {
			has(t, objs, true, "ValidatingAdmissionPolicy/kubectl-maintenance-requester-rights", "ClusterRole/kubectl-maintenance-view",
				"PodDisruptionBudget/kube-system/kubectl-maintenance-controller")
			has(t, objs, false, "PodMonitor/kube-system/kubectl-maintenance-controller")
			crd := objs["CustomResourceDefinition/maintenances.maintenance.kubectl-maintenance.io"]
			if v, _, _ := unstructured.NestedString(crd, "metadata", "annotations", "helm.sh/resource-policy"); v != "keep" {
				t.Errorf("the CRD's helm.sh/resource-policy = %q, want keep (an uninstall keeps the Maintenances)", v)
			}
		}},
		{"every value set", all, func(t *testing.T, objs map[string]map[string]any) {
			has(t, objs, false, "ValidatingAdmissionPolicy/kubectl-maintenance-requester-rights", "ValidatingAdmissionPolicyBinding/kubectl-maintenance-requester-rights",
				"ClusterRole/kubectl-maintenance-view", "ClusterRole/kubectl-maintenance-edit", "ClusterRole/kubectl-maintenance-admin",
				"PodDisruptionBudget/kube-system/kubectl-maintenance-controller")
			has(t, objs, true, "PodMonitor/kube-system/kubectl-maintenance-controller", "ClusterRole/kubectl-maintenance-controller")
			d := objs["Deployment/kube-system/kubectl-maintenance-controller"]
			if r, _, _ := unstructured.NestedFieldNoCopy(d, "spec", "replicas"); fmt.Sprint(r) != "3" {
				t.Errorf("replicas %v, want 3", r)
			}
			c := container(t, d)
			args := fmt.Sprint(c["args"])
			for _, a := range []string{"--leader-election-lease-duration=30s", "--leader-election-renew-deadline=20s", "--leader-election-retry-period=4s", "--rollout"} {
				if !strings.Contains(args, a) {
					t.Errorf("args %s: no %s", args, a)
				}
			}
			if m, _, _ := unstructured.NestedString(c, "resources", "limits", "memory"); m != "512Mi" {
				t.Errorf("memory limit %q, want 512Mi", m)
			}
			if s, _, _ := unstructured.NestedString(d, "spec", "template", "spec", "nodeSelector", "pool"); s != "infra" {
				t.Errorf("nodeSelector pool=%q, want infra", s)
			}
			if tl, _, _ := unstructured.NestedSlice(d, "spec", "template", "spec", "tolerations"); len(tl) != 1 {
				t.Errorf("tolerations %v, want one", tl)
			}
			if l, _, _ := unstructured.NestedString(objs["PodMonitor/kube-system/kubectl-maintenance-controller"], "metadata", "labels", "release"); l != "prom" {
				t.Errorf("the PodMonitor's release label %q, want prom", l)
			}
			crd := objs["CustomResourceDefinition/maintenances.maintenance.kubectl-maintenance.io"]
			if _, found, _ := unstructured.NestedString(crd, "metadata", "annotations", "helm.sh/resource-policy"); found {
				t.Error("crds.keep=false: the CRD still says keep")
			}
		}},
		{"no CRDs", []string{"crds.install=false"}, func(t *testing.T, objs map[string]map[string]any) {
			has(t, objs, false, "CustomResourceDefinition/maintenances.maintenance.kubectl-maintenance.io", "CustomResourceDefinition/nodepools.maintenance.kubectl-maintenance.io")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vals, err := Values(tc.sets...)
			if err != nil {
				t.Fatal(err)
			}
			for _, err := range Lint(Dir(), "kube-system", vals) {
				t.Errorf("lint: %v", err)
			}
			tc.ok(t, render(t, "kube-system", vals))
		})
	}
}

func render(t *testing.T, ns string, vals map[string]any) map[string]map[string]any {
	t.Helper()
	m, err := Render(Dir(), "kubectl-maintenance", ns, vals)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, "the chart", []byte(m))
}

// same compares two sets of objects, Helm's labels and annotations taken off both.
func same(t *testing.T, gotName string, got map[string]map[string]any, wantName string, want map[string]map[string]any) {
	t.Helper()
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		g, w := got[k], want[k]
		switch {
		case g == nil:
			t.Errorf("%s: %s has no %s", k, gotName, k)
		case w == nil:
			t.Errorf("%s: %s has %s, %s does not", k, gotName, k, wantName)
		default:
			unhelm(g)
			unhelm(w)
			if !reflect.DeepEqual(g, w) {
				gy, _ := yaml.Marshal(g)
				wy, _ := yaml.Marshal(w)
				t.Errorf("%s differs:\n--- %s\n%s\n--- %s\n%s", k, gotName, gy, wantName, wy)
			}
		}
	}
}

// unhelm takes off what Helm's conventions add: the helm.sh/ and app.kubernetes.io/
// labels, the CRDs' helm.sh/resource-policy annotation.
func unhelm(o map[string]any) {
	for _, f := range []string{"labels", "annotations"} {
		m, _, _ := unstructured.NestedMap(o, "metadata", f)
		for k := range m {
			if strings.HasPrefix(k, "helm.sh/") || strings.HasPrefix(k, "app.kubernetes.io/") {
				delete(m, k)
			}
		}
		if len(m) == 0 {
			unstructured.RemoveNestedField(o, "metadata", f)
		} else {
			_ = unstructured.SetNestedMap(o, m, "metadata", f)
		}
	}
}

// decode reads a YAML stream into its objects by kind/namespace/name.
func decode(t *testing.T, what string, b []byte) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		var o map[string]any
		err := d.Decode(&o)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("decode %s: %v", what, err)
		}
		if o == nil {
			continue
		}
		u := unstructured.Unstructured{Object: o}
		k := u.GetKind() + "/" + u.GetName()
		if u.GetNamespace() != "" {
			k = u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
		}
		if _, dup := out[k]; dup {
			t.Errorf("%s holds %s twice", what, k)
		}
		out[k] = o
	}
}

func has(t *testing.T, objs map[string]map[string]any, want bool, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := objs[k]; ok != want {
			t.Errorf("rendered %s: %v, want %v", k, ok, want)
		}
	}
}

func container(t *testing.T, d map[string]any) map[string]any {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(d, "spec", "template", "spec", "containers")
	if len(cs) != 1 {
		t.Fatalf("%d containers, want 1", len(cs))
	}
	return cs[0].(map[string]any)
}

// buildPlugin builds the plugin (the root module) into the test's directory.
func buildPlugin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kubectl-maintenance")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/kubectl-maintenance")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the plugin: %v\n%s", err, out)
	}
	return bin
}

// kubectl is the pinned kubectl (hack/build-tools.sh builds it once per machine and prints
// its directory).
func kubectl(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(root, "hack", "build-tools.sh")).Output()
	if err != nil {
		t.Fatalf("hack/build-tools.sh: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "kubectl")
}

func run(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(t.TempDir(), "none"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, stderr.String())
	}
	return out
}
