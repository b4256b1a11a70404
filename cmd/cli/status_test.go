package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

func statusNode(name string, labels, annotations map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations}}
}

func TestStatusListsOnlyTouchedNodes(t *testing.T) {
	since := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	blocked := statusNode("n1", map[string]string{noderecord.LabelState: noderecord.StateBlocked}, map[string]string{
		noderecord.AnnotationDrain: noderecord.StateBlocked, noderecord.AnnotationSince: since.Format(time.RFC3339),
		noderecord.AnnotationUser: "jane", noderecord.AnnotationCommand: "kubectl maintenance drain n1 --on-blocked=skip"})
	blocked.Spec.Unschedulable = true
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs", Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	cs := kubefake.New(blocked, statusNode("n2", nil, nil), pod)

	tests := map[string]struct {
		format string
		want   []string
		not    []string
	}{
		"the table":      {"", []string{"NAME", "STATE", "SINCE", "USER", "PODS-LEFT", "n1", "blocked", "10m", "jane", "1"}, []string{"n2", "COMMAND"}},
		"the wide table": {"wide", []string{"COMMAND", "CORDONED-BY-US", "kubectl maintenance drain n1 --on-blocked=skip"}, []string{"n2"}},
		"json":           {"json", []string{`"kind": "NodeMaintenanceStatus"`, `"state": "blocked"`, `"podsLeft": 1`, `"pod": "ns/p"`, `"user": "jane"`}, []string{"n2"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			o := &StatusOptions{Common: &Common{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}},
				Output: NewOutputFlags(true), Now: func() time.Time { return since.Add(10 * time.Minute) }}
			o.Output.Format = tc.format
			if err := o.Run(context.Background(), cs); err != nil {
				t.Fatal(err)
			}
			mustHave(t, out.String(), tc.want, tc.not)
		})
	}
}

func mustHave(t *testing.T, s string, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("output lacks %q:\n%s", w, s)
		}
	}
	for _, n := range not {
		if strings.Contains(s, n) {
			t.Errorf("output has %q:\n%s", n, s)
		}
	}
}

// A named node that does not exist is a usage error (exit 2), as for drain and uncordon;
// a node that exists but was never touched is not.
func TestStatusOfANodeThatDoesNotExist(t *testing.T) {
	cs := kubefake.New(statusNode("n2", nil, nil))
	for _, tc := range []struct {
		names []string
		code  int
	}{
		{[]string{"nosuch"}, ExitUsage},
		{[]string{"n2"}, 0},
	} {
		var out, errOut bytes.Buffer
		o := &StatusOptions{Common: &Common{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}},
			Output: NewOutputFlags(true), Names: tc.names, Now: time.Now}
		err := o.Run(context.Background(), cs)
		if code := ExitCode(err); code != tc.code || (tc.code != 0 && !strings.Contains(err.Error(), `node "nosuch" not found`)) {
			t.Errorf("status %v: %v (exit %d), want exit %d", tc.names, err, code, tc.code)
		}
	}
}
