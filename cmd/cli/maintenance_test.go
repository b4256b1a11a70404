package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

func testMaintenances(names ...string) *mntv1.MaintenanceList {
	l := &mntv1.MaintenanceList{}
	for _, n := range names {
		l.Items = append(l.Items, mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: n, CreationTimestamp: created},
			Spec: mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: []string{"n1"}}})
	}
	return l
}

// get prints as kubectl get: -o name one kind.group/name line per object; json and yaml
// a v1 List whenever no single name was given, even of one object; one name the object.
func TestGetPrintsAsKubectlGet(t *testing.T) {
	tests := map[string]struct {
		format  string
		objects []string
		single  bool
		want    string // the whole output, or (contains) a part of it
		exact   bool
		not     []string
	}{
		"-o name of two":   {"name", []string{"a", "b"}, false, "maintenance.maintenance.kubectl-maintenance.io/a\nmaintenance.maintenance.kubectl-maintenance.io/b\n", true, nil},
		"-o name of one":   {"name", []string{"a"}, false, "maintenance.maintenance.kubectl-maintenance.io/a\n", true, nil},
		"-o name of none":  {"name", nil, false, "", true, nil},
		"-o json of one":   {"json", []string{"a"}, false, `"kind": "List"`, false, []string{`"kind": "MaintenanceList"`}},
		"-o json of two":   {"json", []string{"a", "b"}, false, `"kind": "List"`, false, nil},
		"-o json of none":  {"json", nil, false, `"kind": "List"`, false, nil},
		"-o yaml of one":   {"yaml", []string{"a"}, false, "kind: List", false, nil},
		"-o json, a name":  {"json", []string{"a"}, true, `"kind": "Maintenance"`, false, []string{`"kind": "List"`}},
		"jsonpath of one":  {"jsonpath={.items[*].metadata.name}", []string{"a"}, false, "a", true, nil},
		"jsonpath of two":  {"jsonpath={.items[*].metadata.name}", []string{"a", "b"}, false, "a b", true, nil},
		"the table":        {"", []string{"a"}, false, "NAME", false, nil},
		"no table of none": {"", nil, false, "", true, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			c := &Common{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}}
			of := NewOutputFlags(true)
			of.Format = tc.format
			if err := printMaintenances(c, of, testMaintenances(tc.objects...), tc.single, true); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			if tc.exact && got != tc.want || !tc.exact && !strings.Contains(got, tc.want) {
				t.Errorf("-o %s printed\n%s\nwant %q", tc.format, got, tc.want)
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("-o %s printed %q:\n%s", tc.format, n, got)
				}
			}
		})
	}
}

// follow of a name that never existed: one line, exit 2, nothing on stdout.
func TestFollowOfANameNeverSeenIsNotFound(t *testing.T) {
	for _, output := range []string{"", "json"} {
		var out, errOut bytes.Buffer
		c := &Common{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}}
		err := c.follow(context.Background(), crfake.NewClientBuilder().WithScheme(Scheme()).Build(), "nosuch", output)
		if err == nil || err.Error() != `maintenance "nosuch" not found` || ExitCode(err) != ExitUsage {
			t.Errorf("-o %q: %v (exit %d), want `maintenance \"nosuch\" not found`, exit 2", output, err, ExitCode(err))
		}
		if out.Len() != 0 {
			t.Errorf("-o %q: stdout %q, want nothing", output, out.String())
		}
	}
}

// follow -o json of a finished Maintenance: NDJSON, every line an event, the version
// first, the nodes' events, the summary last with the phase's exit code.
func TestFollowJSONPrintsEventsEndingInASummary(t *testing.T) {
	start := metav1.NewTime(time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC))
	end := metav1.NewTime(start.Add(time.Minute))
	tests := map[string]struct {
		phase mntv1.Phase
		nodes []mntv1.NodeStatus
		types []string
		code  int
	}{
		"a drain that succeeded": {mntv1.PhaseSucceeded,
			[]mntv1.NodeStatus{{Name: "n1", State: maintenance.NodeDrained, Since: &end}},
			[]string{"version", "node.cordoned", "node.drained", "summary"}, ExitOK},
		"a drain that gave a node up": {mntv1.PhaseBlocked,
			[]mntv1.NodeStatus{{Name: "n1", State: maintenance.NodeDrained}, {Name: "n2", State: maintenance.NodeBlocked, Message: "gave up",
				Blockers: []mntv1.Blocker{{Pod: "ns/db-0", PDB: "ns/db", Message: "pdb ns/db allows 0"}}}},
			[]string{"version", "node.cordoned", "node.drained", "pod.eviction_blocked", "node.blocked", "summary"}, ExitBlocked},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: "m1"}, Spec: mntv1.MaintenanceSpec{Action: mntv1.ActionDrain},
				Status: mntv1.MaintenanceStatus{Phase: tc.phase, StartTime: &start, CompletionTime: &end, Nodes: tc.nodes,
					Counts: mntv1.Counts{NodesDrained: 1, PodsEvicted: 4}}}
			var out, errOut bytes.Buffer
			c := &Common{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}}
			err := c.follow(context.Background(), crfake.NewClientBuilder().WithScheme(Scheme()).WithObjects(m).Build(), "m1", "json")
			if ExitCode(err) != tc.code {
				t.Errorf("exit %d (%v), want %d", ExitCode(err), err, tc.code)
			}
			var types []string
			var last map[string]any
			for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				last = map[string]any{}
				if err := json.Unmarshal([]byte(l), &last); err != nil {
					t.Fatalf("not a JSON line: %q: %v", l, err)
				}
				types = append(types, last["type"].(string))
			}
			if strings.Join(types, " ") != strings.Join(tc.types, " ") {
				t.Errorf("types %v, want %v", types, tc.types)
			}
			if code, _ := last["exit_code"].(float64); int(code) != tc.code {
				t.Errorf("summary exit_code %v, want %d", last["exit_code"], tc.code)
			}
			if sum, _ := last["summary"].(map[string]any); sum["pods_evicted"] != float64(4) || sum["elapsed_seconds"] != float64(60) {
				t.Errorf("summary %v, want 4 pods evicted in 60 s", sum)
			}
		})
	}
}
