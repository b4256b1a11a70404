package cli

import (
	"bufio"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// yamlStream decodes a multi-document YAML stream.
func yamlStream(t *testing.T, s string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(s)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatal(err)
		}
		o := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &o.Object); err != nil {
			t.Fatalf("a document of the stream is not YAML: %v\n%s", err, doc)
		}
		objs = append(objs, o)
	}
}

func TestInstallDryRunPrintsWhatItWouldApply(t *testing.T) {
	const ctl = "kubectl-maintenance-controller"
	crds := []string{"CustomResourceDefinition/nodepools.maintenance.kubectl-maintenance.io",
		"CustomResourceDefinition/maintenances.maintenance.kubectl-maintenance.io"}
	controller := append(slices.Clone(crds), "ServiceAccount/"+ctl, "ClusterRole/"+ctl,
		"ClusterRole/kubectl-maintenance-view", "ClusterRole/kubectl-maintenance-edit", "ClusterRole/kubectl-maintenance-admin",
		"ClusterRoleBinding/"+ctl, "PodDisruptionBudget/"+ctl, "Deployment/"+ctl,
		"ValidatingAdmissionPolicy/kubectl-maintenance-requester-rights", "ValidatingAdmissionPolicyBinding/kubectl-maintenance-requester-rights")
	tests := map[string]struct {
		args      []string
		want      []string
		namespace string
		image     string
	}{
		"the CRDs alone without --controller": {nil, crds, "", ""},
		"the controller in kube-system by default": {[]string{"--controller"}, controller,
			"kube-system", "ghcr.io/kubectl-maintenance/kubectl-maintenance:dev"},
		"--image and --namespace honoured": {[]string{"--controller", "--image", "registry.example/km:v1", "--namespace", "ops"},
			controller, "ops", "registry.example/km:v1"},
		"-n is --namespace": {[]string{"--controller", "-n", "ops"}, controller, "ops", "ghcr.io/kubectl-maintenance/kubectl-maintenance:dev"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			// A kubeconfig that cannot load: the dry run must not even read it.
			args := append([]string{"--kubeconfig", t.TempDir() + "/none", "install", "--dry-run=client", "-o", "yaml"}, tc.args...)
			out, errOut, code := run(args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			objs := yamlStream(t, out)
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind()+"/"+o.GetName())
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("printed %v, want %v", got, tc.want)
			}
			for _, o := range objs {
				switch o.GetKind() {
				case "ServiceAccount", "PodDisruptionBudget", "Deployment":
					if o.GetNamespace() != tc.namespace {
						t.Errorf("%s/%s in %q, want %q", o.GetKind(), o.GetName(), o.GetNamespace(), tc.namespace)
					}
				case "ClusterRoleBinding":
					subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
					if ns := subjects[0].(map[string]any)["namespace"]; ns != tc.namespace {
						t.Errorf("the binding's subject in %v, want %s", ns, tc.namespace)
					}
				}
				if o.GetKind() == "Deployment" {
					cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
					if img := cs[0].(map[string]any)["image"]; img != tc.image {
						t.Errorf("image %v, want %s", img, tc.image)
					}
				}
			}
		})
	}
}

func TestInstallDryRunOtherOutputs(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string // a line of the output
	}{
		"-o name":          {[]string{"-o", "name"}, "deployment.apps/kubectl-maintenance-controller"},
		"no -o":            {nil, "clusterrole.rbac.authorization.k8s.io/kubectl-maintenance-controller applied (dry run)"},
		"-o json":          {[]string{"-o", "json"}, `    "kind": "ClusterRoleBinding",`},
		"a bare --dry-run": {[]string{"--dry-run", "-o", "name"}, "serviceaccount/kubectl-maintenance-controller"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"--kubeconfig", t.TempDir() + "/none", "install", "--controller"}, tc.args...)
			if !slices.Contains(tc.args, "--dry-run") {
				args = append(args, "--dry-run=client")
			}
			out, errOut, code := run(args...)
			if code != 0 || !slices.Contains(strings.Split(out, "\n"), tc.want) {
				t.Errorf("exit %d, stdout:\n%s\nstderr: %s\nwant the line %q", code, out, errOut, tc.want)
			}
		})
	}
}

func TestInstallFlagsAreValidatedBeforeAnyCall(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"--image without --controller": {[]string{"--image", "x"}, "--image is the controller's image: add --controller"},
		"-o without a dry run":         {[]string{"--controller", "-o", "yaml"}, "-o prints what install would apply: add --dry-run=client"},
		"a server dry run":             {[]string{"--dry-run=server"}, `invalid --dry-run "server"`},
		"an unknown output":            {[]string{"--dry-run=client", "-o", "wide"}, `output format "wide"`},
		"a bad dry run":                {[]string{"--dry-run=maybe"}, `invalid --dry-run "maybe"`},
		"uninstall takes no arguments": {[]string{"x"}, "takes no arguments"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cmd := "install"
			if strings.HasPrefix(name, "uninstall") {
				cmd = "uninstall"
			}
			out, errOut, code := run(append([]string{"--kubeconfig", t.TempDir() + "/none", cmd}, tc.args...)...)
			if code != ExitUsage || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", code, out, errOut, tc.want)
			}
		})
	}
}
