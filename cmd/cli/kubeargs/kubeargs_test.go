package kubeargs

import (
	"strings"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
)

func TestNodeArg(t *testing.T) {
	tests := []struct {
		name, arg, want, wantErr string
	}{
		{name: "a bare name is a node", arg: "node-1", want: "node-1"},
		{name: "node/NAME, the form -o name prints", arg: "node/node-1", want: "node-1"},
		{name: "nodes/NAME", arg: "nodes/node-1", want: "node-1"},
		{name: "the short name no/NAME", arg: "no/node-1", want: "node-1"},
		{name: "the kind Node/NAME, matched without case", arg: "Node/node-1", want: "node-1"},
		{name: "NODES/NAME in capitals", arg: "NODES/node-1", want: "node-1"},
		{name: "the core group spelled empty", arg: "nodes./node-1", want: "node-1"},
		{name: "with the version and the core group", arg: "node.v1./node-1", want: "node-1"},
		{name: "a name with dots", arg: "node/ip-10-0-0-1.ec2.internal", want: "ip-10-0-0-1.ec2.internal"},
		{name: "another resource type", arg: "pod/web-1", wantErr: `"pod/web-1": expected resource of type node, got "pod"`},
		{name: "a type with a group that is not core", arg: "nodes.karpenter.sh/n1", wantErr: `expected resource of type node`},
		{name: "a version without the group is not kubectl's form", arg: "nodes.v1/n1", wantErr: `expected resource of type node`},
		{name: "two slashes", arg: "node/a/b", wantErr: "may not have more than one slash"},
		{name: "an empty name after the slash", arg: "node/", wantErr: "must have a single resource and name"},
		{name: "an empty type before the slash", arg: "/n1", wantErr: "must have a single resource and name"},
		{name: "an empty argument", arg: "", wantErr: "empty node name"},
		{name: "a name that is no DNS subdomain", arg: "node/Node_1", wantErr: `invalid node name "Node_1"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NodeArg(tc.arg)
			checkArg(t, got, err, tc.want, tc.wantErr)
		})
	}
}

func TestPoolArg(t *testing.T) {
	tests := []struct {
		name, arg, want, wantErr string
	}{
		{name: "a bare name", arg: "blue", want: "blue"},
		{name: "the form pool get -o name prints", arg: "nodepool.maintenance.kubectl-maintenance.io/blue", want: "blue"},
		{name: "the plural with the group and version", arg: "nodepools.v1alpha1.maintenance.kubectl-maintenance.io/blue", want: "blue"},
		{name: "the short name", arg: "mntpool/blue", want: "blue"},
		{name: "the kind without a group", arg: "NodePool/blue", want: "blue"},
		{name: "Karpenter's NodePool is not ours", arg: "nodepool.karpenter.sh/default", wantErr: `expected resource of type nodepool.maintenance.kubectl-maintenance.io, got "nodepool.karpenter.sh"`},
		{name: "a node is not a pool", arg: "node/blue", wantErr: "expected resource of type nodepool"},
		{name: "an invalid pool name", arg: "Blue.1", wantErr: `invalid pool name "Blue.1"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PoolArg(tc.arg)
			checkArg(t, got, err, tc.want, tc.wantErr)
		})
	}
}

func checkArg(t *testing.T, got string, err error, want, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("error %v, want one containing %q", err, wantErr)
		}
		if !drain.IsUsage(err) {
			t.Errorf("error %v is not a usage error (exit 2)", err)
		}
		return
	}
	if err != nil || got != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

func TestNodeArgsStopsAtTheFirstBadArgument(t *testing.T) {
	if got, err := NodeArgs([]string{"n1", "node/n2", "nodes/n3"}); err != nil || strings.Join(got, ",") != "n1,n2,n3" {
		t.Fatalf("got %v, %v; want n1,n2,n3", got, err)
	}
	if _, err := NodeArgs([]string{"n1", "pod/p", "n3"}); err == nil || !strings.Contains(err.Error(), "pod/p") {
		t.Fatalf("error %v, want one naming pod/p", err)
	}
}

func TestDryRunArg(t *testing.T) {
	tests := []struct {
		name, arg   string
		want        drain.DryRun
		warning     string
		wantErrText string
	}{
		{name: "none", arg: "none", want: drain.DryRunNone},
		{name: "client", arg: "client", want: drain.DryRunClient},
		{name: "server", arg: "server", want: drain.DryRunServer},
		{name: "a bare --dry-run is client, deprecated", arg: DryRunUnchanged, want: drain.DryRunClient,
			warning: "--dry-run is deprecated and can be replaced with --dry-run=client."},
		{name: "true is client, deprecated", arg: "true", want: drain.DryRunClient,
			warning: "--dry-run=true is deprecated (boolean value) and can be replaced with --dry-run=client."},
		{name: "false is none, deprecated", arg: "false", want: drain.DryRunNone,
			warning: "--dry-run=false is deprecated (boolean value) and can be replaced with --dry-run=none."},
		{name: "ParseBool's other spellings, as kubectl", arg: "1", want: drain.DryRunClient,
			warning: "--dry-run=1 is deprecated (boolean value) and can be replaced with --dry-run=client."},
		{name: "anything else is a usage error", arg: "yes", wantErrText: `invalid --dry-run "yes"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, warning, err := DryRunArg(tc.arg)
			if tc.wantErrText != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrText) || !drain.IsUsage(err) {
					t.Fatalf("error %v, want a usage error containing %q", err, tc.wantErrText)
				}
				return
			}
			if err != nil || got != tc.want || warning != tc.warning {
				t.Fatalf("got %q, %q, %v; want %q, %q", got, warning, err, tc.want, tc.warning)
			}
		})
	}
}
