package nodepool

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// ApplyFieldManager is the field manager of pool apply's server-side apply.
const ApplyFieldManager = noderecord.FieldManager

// ApplyResult is what applying a pool did, in kubectl apply's words.
type ApplyResult string

// Results of Apply.
const (
	Created    ApplyResult = "created"
	Configured ApplyResult = "configured"
	Unchanged  ApplyResult = "unchanged"
)

// Document is one NodePool read from a file, and where it came from.
type Document struct {
	Pool   *v1alpha1.NodePool
	Source string // "file.yaml (document 2)"
}

// ReadPools decodes every YAML or JSON document of r strictly (an unknown field is an
// error); empty documents are skipped. Each must be a NodePool with a name. source names
// r in errors. Errors are usage errors: nothing is applied from a stream with a bad
// document.
func ReadPools(r io.Reader, source string) ([]Document, error) {
	yr := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var out []Document
	for i := 1; ; i++ {
		doc, err := yr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, Usagef("read %s: %v", source, err)
		}
		where := fmt.Sprintf("%s (document %d)", source, i)
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		// The kind first: a ConfigMap is named as one, not by the first field a NodePool
		// lacks (its "data").
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return nil, Usagef("invalid pool in %s: %v", where, err)
		}
		if tm.Kind == "NodePool" && tm.APIVersion != v1alpha1.GroupVersion.String() {
			return nil, Usagef("invalid pool in %s: a NodePool of apiVersion %q, not %s (another project's NodePool?)", where, tm.APIVersion, v1alpha1.GroupVersion)
		}
		if tm.Kind != "NodePool" {
			return nil, Usagef("invalid pool in %s: %s, not a NodePool (apiVersion %s)", where, describeKind(tm), v1alpha1.GroupVersion)
		}
		p := &v1alpha1.NodePool{}
		if err := yaml.UnmarshalStrict(doc, p); err != nil {
			return nil, Usagef("invalid pool in %s: %v", where, err)
		}
		if p.Name == "" {
			return nil, Usagef("invalid pool in %s: metadata.name is required", where)
		}
		out = append(out, Document{Pool: p, Source: where})
	}
}

// describeKind names what a document is: "a ConfigMap (v1)", "no kind".
func describeKind(tm metav1.TypeMeta) string {
	switch {
	case tm.Kind == "" && tm.APIVersion == "":
		return "it has no apiVersion and no kind"
	case tm.Kind == "":
		return fmt.Sprintf("it has apiVersion %s and no kind", tm.APIVersion)
	case tm.APIVersion == "":
		return fmt.Sprintf("it is a %s with no apiVersion", tm.Kind)
	}
	return fmt.Sprintf("it is a %s (%s)", tm.Kind, tm.APIVersion)
}

func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, l := range strings.Split(string(doc), "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") && t != "---" {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// CheckDuplicates refuses two documents for one pool (which one would win is not obvious).
func CheckDuplicates(docs []Document) error {
	seen := map[string]string{}
	for _, d := range docs {
		if prev, ok := seen[d.Pool.Name]; ok {
			return Usagef("pool %s is defined twice: in %s and in %s", d.Pool.Name, prev, d.Source)
		}
		seen[d.Pool.Name] = d.Source
	}
	return nil
}

// Apply creates or updates p by server-side apply, as field manager kubectl-maintenance
// (taking over fields another manager set, as the one tool that owns pools). The result
// is honest: created when the pool did not exist, unchanged when the API server kept
// the object as it was (its resourceVersion, or else its spec, labels and annotations,
// did not move), configured otherwise. The
// server's validation (schema and CEL rules) answers 422, returned as a usage error.
func Apply(ctx context.Context, c client.Client, p *v1alpha1.NodePool) (ApplyResult, error) {
	before := &v1alpha1.NodePool{}
	err := c.Get(ctx, client.ObjectKey{Name: p.Name}, before)
	existed := true
	switch {
	case IsNotInstalled(err):
		return "", ErrNotInstalled
	case apierrors.IsNotFound(err):
		existed = false
	case err != nil:
		return "", fmt.Errorf("get pool %s: %w", p.Name, err)
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	if err != nil {
		return "", fmt.Errorf("encode pool %s: %w", p.Name, err)
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetAPIVersion(v1alpha1.GroupVersion.String())
	u.SetKind("NodePool")
	u.SetResourceVersion("")
	u.SetManagedFields(nil)
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	err = c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(ApplyFieldManager), client.ForceOwnership)
	if apierrors.IsInvalid(err) {
		return "", Usagef("%s", InvalidMessage(err))
	}
	if err != nil {
		return "", fmt.Errorf("apply pool %s: %w", p.Name, err)
	}
	if !existed {
		return Created, nil
	}
	after := &v1alpha1.NodePool{}
	if err := c.Get(ctx, client.ObjectKey{Name: p.Name}, after); err != nil {
		return "", fmt.Errorf("get pool %s: %w", p.Name, err)
	}
	if after.ResourceVersion == before.ResourceVersion || sameContent(before, after) {
		return Unchanged, nil
	}
	return Configured, nil
}

// sameContent compares what a user applies: spec, labels and annotations.
func sameContent(a, b *v1alpha1.NodePool) bool {
	return equality.Semantic.DeepEqual(a.Spec, b.Spec) && equality.Semantic.DeepEqual(a.Labels, b.Labels) &&
		equality.Semantic.DeepEqual(a.Annotations, b.Annotations)
}

// InvalidMessage is the API server's validation answer on one line.
func InvalidMessage(err error) string {
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Details == nil || len(se.ErrStatus.Details.Causes) == 0 {
		return err.Error()
	}
	var parts []string
	for _, c := range se.ErrStatus.Details.Causes {
		parts = append(parts, fmt.Sprintf("%s: %s", c.Field, c.Message))
	}
	return fmt.Sprintf("pool %q is invalid: %s", se.ErrStatus.Details.Name, strings.Join(parts, "; "))
}
