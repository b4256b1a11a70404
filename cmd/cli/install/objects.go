package install

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	pathpkg "path"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-maintenance/kubectl-maintenance/config"
	"github.com/kubectl-maintenance/kubectl-maintenance/config/crd"
)

// DefaultNamespace is the namespace of the controller's objects: the one config/ names,
// whatever the kubeconfig context's namespace is.
const DefaultNamespace = "kube-system"

// FieldManager is the field manager of every server-side apply.
const FieldManager = "kubectl-maintenance"

// leaderElectionFlag is the controller's flag naming the Lease's namespace; it follows
// the namespace the controller is installed in.
const leaderElectionFlag = "--leader-election-namespace="

// Options says what Objects returns.
type Options struct {
	// Controller adds the controller's RBAC and Deployment to the CRDs.
	Controller bool
	// Image, when set, replaces the image of every container of the controller's pods.
	Image string
	// Namespace, when set, replaces the namespace of every namespaced object, and every
	// reference to it: a binding's ServiceAccount subjects, the controller's
	// --leader-election-namespace, a webhook's service. Empty means DefaultNamespace.
	Namespace string
}

// Objects decodes the embedded manifests (the CRDs and, with opts.Controller, the
// RBAC and Deployment of config/), applies opts to them and returns them in apply
// order: by kind (applyRank), then as the files list them.
func Objects(opts Options) ([]*unstructured.Unstructured, error) {
	if opts.Image != "" && !opts.Controller {
		return nil, errors.New("an image is for the controller: set Controller too")
	}
	var objs []*unstructured.Unstructured
	for _, m := range crd.All() {
		got, err := decode("config/crd", m)
		if err != nil {
			return nil, err
		}
		objs = append(objs, got...)
	}
	if opts.Controller {
		got, err := decodeFS(config.Controller)
		if err != nil {
			return nil, err
		}
		objs = append(objs, got...)
	}
	ns := opts.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	renamed := map[string]bool{}
	for _, o := range objs {
		if o.GetNamespace() != "" {
			renamed[o.GetNamespace()] = true
			o.SetNamespace(ns)
		}
	}
	for _, o := range objs {
		if err := rewrite(o, ns, renamed, opts.Image); err != nil {
			return nil, fmt.Errorf("set namespace and image on %s: %w", Ref(o), err)
		}
	}
	sort.SliceStable(objs, func(i, j int) bool { return applyRank(objs[i].GetKind()) < applyRank(objs[j].GetKind()) })
	return objs, nil
}

// kustomization is the file that makes a directory of config/ a kustomize base
// (config/default renders them all); it lists the manifests, it is not one.
const kustomization = "kustomization.yaml"

// decodeFS decodes every .yaml file of fsys but the kustomization files, in path order.
func decodeFS(fsys fs.FS) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") || pathpkg.Base(path) == kustomization {
			return err
		}
		b, err := fs.ReadFile(fsys, path)
		if err != nil {
			return fmt.Errorf("read embedded config/%s: %w", path, err)
		}
		got, err := decode("config/"+path, b)
		objs = append(objs, got...)
		return err
	})
	return objs, err
}

// decode splits a YAML stream into its objects, skipping empty documents (comments only).
func decode(file string, b []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", file, err)
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("decode %s, document %d: %w", file, i, err)
		}
		if s := strings.TrimSpace(string(j)); s == "null" || s == "{}" {
			continue
		}
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(j); err != nil {
			return nil, fmt.Errorf("decode %s, document %d: %w", file, i, err)
		}
		if o.GetName() == "" {
			return nil, fmt.Errorf("decode %s, document %d: %s has no metadata.name", file, i, o.GetKind())
		}
		objs = append(objs, o)
	}
}

// rewrite points o's references to a renamed namespace at ns, and its pods at image.
func rewrite(o *unstructured.Unstructured, ns string, renamed map[string]bool, image string) error {
	switch o.GetKind() {
	case "ClusterRoleBinding", "RoleBinding":
		return eachMap(o.Object, []string{"subjects"}, func(s map[string]any) error {
			if s["kind"] == "ServiceAccount" && renamed[str(s["namespace"])] {
				s["namespace"] = ns
			}
			return nil
		})
	case "Deployment", "StatefulSet", "DaemonSet":
		return eachMap(o.Object, []string{"spec", "template", "spec", "containers"}, func(c map[string]any) error {
			if image != "" {
				c["image"] = image
			}
			args, _ := c["args"].([]any)
			for i, a := range args {
				if v, ok := strings.CutPrefix(str(a), leaderElectionFlag); ok && renamed[v] {
					args[i] = leaderElectionFlag + ns
				}
			}
			return nil
		})
	case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
		return eachMap(o.Object, []string{"webhooks"}, func(w map[string]any) error {
			svc, _, err := unstructured.NestedMap(w, "clientConfig", "service")
			if err != nil || svc == nil || !renamed[str(svc["namespace"])] {
				return err
			}
			return unstructured.SetNestedField(w, ns, "clientConfig", "service", "namespace")
		})
	}
	return nil
}

// eachMap calls fn with each object of the list at path (none when there is no list).
func eachMap(obj map[string]any, path []string, fn func(map[string]any) error) error {
	items, found, err := unstructured.NestedFieldNoCopy(obj, path...)
	if err != nil || !found {
		return err
	}
	list, ok := items.([]any)
	if !ok {
		return fmt.Errorf("%s is not a list", strings.Join(path, "."))
	}
	for _, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return fmt.Errorf("an item of %s is not an object", strings.Join(path, "."))
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

func str(v any) string { s, _ := v.(string); return s }

// Apply order by kind, Helm's install order cut down: what others refer to first (CRDs,
// the ServiceAccount, RBAC), then the workload, then admission, whose policies and
// webhooks could refuse requests before the rest is in place. Kinds not listed go
// between the workload and admission. Uninstall goes backwards, so the CRDs go last.
var (
	applyFirst = []string{"CustomResourceDefinition", "Namespace", "PriorityClass", "ServiceAccount", "Secret",
		"ConfigMap", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Service", "PodDisruptionBudget",
		"DaemonSet", "StatefulSet", "Deployment"}
	applyLast = []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
		"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding",
		"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}
)

// applyRank is kind's place in the apply order.
func applyRank(kind string) int {
	for i, k := range applyFirst {
		if k == kind {
			return i
		}
	}
	for i, k := range applyLast {
		if k == kind {
			return len(applyFirst) + 1 + i
		}
	}
	return len(applyFirst)
}

// Ref names o as kubectl does in its output: kind.group/name, lowercase, with no group
// for the core API ("serviceaccount/x", "deployment.apps/x").
func Ref(o *unstructured.Unstructured) string {
	gvk := o.GroupVersionKind()
	k := strings.ToLower(gvk.Kind)
	if gvk.Group != "" {
		k += "." + gvk.Group
	}
	return k + "/" + o.GetName()
}
