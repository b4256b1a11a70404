// Package kubeargs reads command-line arguments as kubectl reads them: a node or a pool
// named bare, as TYPE/NAME in any spelling kubectl's RESTMapper accepts (node/n1,
// Nodes.v1./n1, mntpool/blue, nodepools.maintenance.kubectl-maintenance.io/blue),
// --dry-run's values and --not-after's times; and writes the cluster flags a command was
// given back as arguments (for the commands the dashboard prints). Only the commands
// (cmd/cli) use it.
package kubeargs

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
)

// PoolGroup is the API group of our NodePool. A pool named with a group names ours only
// with this one: nodepool.karpenter.sh/NAME is Karpenter's, not ours.
const PoolGroup = "maintenance.kubectl-maintenance.io"

// PoolShortName is our NodePool's short name (kubectl get mntpool): Karpenter's NodePool
// has none, Cluster API's MachinePool is mp, OpenShift's MachineConfigPool mcp and the
// MultiNetworkPolicy OpenShift installs mnp.
const PoolShortName = "mntpool"

// nodeTypes are the spellings of the node resource kubectl's RESTMapper resolves (the
// plural, the singular or kind, the short name), each alone, with the core group spelled
// as empty ("node.") or with its version ("node.v1."). kubectl matches them without case.
var nodeTypes = typeSpellings([]string{"nodes", "node", "no"}, "", "v1")

// poolTypes are the spellings of our NodePool, every one naming our group unless it is
// the bare plural, singular or short name.
var poolTypes = typeSpellings([]string{"nodepools", "nodepool", PoolShortName}, PoolGroup, "v1alpha1")

// typeSpellings returns names, and names followed by ".GROUP" and ".VERSION.GROUP".
func typeSpellings(names []string, group, version string) map[string]bool {
	out := map[string]bool{}
	for _, n := range names {
		out[n] = true
		out[n+"."+group] = true
		out[n+"."+version+"."+group] = true
	}
	return out
}

// NodeArg returns the node name one command-line argument names, in any form kubectl
// takes where it takes nodes: NAME, TYPE/NAME with TYPE node, nodes or no (in any case,
// optionally with the core group, "node." or "node.v1."), so that every command's -o name
// output (node/NAME) is input to every other. Another resource type, more than one slash,
// an empty part or an invalid name is a UsageError naming the argument.
func NodeArg(arg string) (string, error) {
	name, err := typedName(arg, "node", nodeTypes)
	if err != nil {
		return "", err
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", drain.Usagef("invalid node name %q: %s", name, strings.Join(errs, "; "))
	}
	return name, nil
}

// NodeArgs returns the node names args name (NodeArg of each, in order), or the first
// argument's error.
func NodeArgs(args []string) ([]string, error) {
	names := make([]string, 0, len(args))
	for _, a := range args {
		n, err := NodeArg(a)
		if err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, nil
}

// PoolArg returns the pool name one argument names: NAME, or TYPE/NAME where TYPE is our
// NodePool's plural, singular or short name, alone or with our group (the form pool get
// -o name prints: nodepool.maintenance.kubectl-maintenance.io/NAME). A NodePool of another
// group, Karpenter's nodepool.karpenter.sh/NAME, is a UsageError saying whose it is.
func PoolArg(arg string) (string, error) {
	name, err := typedName(arg, "nodepool."+PoolGroup, poolTypes)
	if err != nil {
		return "", err
	}
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return "", drain.Usagef("invalid pool name %q: %s", name, strings.Join(errs, "; "))
	}
	return name, nil
}

// typedName splits TYPE/NAME (or takes NAME alone) and checks TYPE against want, with
// kubectl's messages for the shapes its builder refuses.
func typedName(arg, kind string, want map[string]bool) (string, error) {
	if arg == "" {
		return "", drain.Usagef("empty %s name", kind)
	}
	typ, name, found := strings.Cut(arg, "/")
	if !found {
		return arg, nil
	}
	if strings.Contains(name, "/") {
		return "", drain.Usagef("%q: arguments in resource/name form may not have more than one slash", arg)
	}
	if typ == "" || name == "" {
		return "", drain.Usagef("%q: arguments in resource/name form must have a single resource and name", arg)
	}
	if !want[strings.ToLower(typ)] {
		return "", drain.Usagef("%q: expected resource of type %s, got %q", arg, kind, typ)
	}
	return name, nil
}

// DryRunUnchanged is what a bare --dry-run (no value) sets, as kubectl's AddDryRunFlag
// makes it: DryRunArg takes it as "client", with kubectl's deprecation warning.
const DryRunUnchanged = "unchanged"

// DryRunArg turns a --dry-run value into a dry-run mode as kubectl's GetDryRunStrategy
// does: "none", "client" and "server"; a bare flag (DryRunUnchanged) as "client"; and the
// deprecated booleans (anything strconv.ParseBool takes: true, 1, False...) as "client"
// or "none". For the deprecated forms it also returns kubectl's warning, word for word,
// for the caller to print. Anything else is a UsageError.
func DryRunArg(v string) (mode drain.DryRun, warning string, err error) {
	b, perr := strconv.ParseBool(v)
	if perr == nil {
		mode = drain.DryRunNone
		if b {
			mode = drain.DryRunClient
		}
		return mode, fmt.Sprintf("--dry-run=%v is deprecated (boolean value) and can be replaced with --dry-run=%s.", v, mode), nil
	}
	switch v {
	case DryRunUnchanged:
		return drain.DryRunClient, "--dry-run is deprecated and can be replaced with --dry-run=client.", nil
	case "client":
		return drain.DryRunClient, "", nil
	case "server":
		return drain.DryRunServer, "", nil
	case "none":
		return drain.DryRunNone, "", nil
	}
	return drain.DryRunNone, "", drain.Usagef(`invalid --dry-run %q: must be "none", "server" or "client"`, v)
}
