package drain

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubectldrain "k8s.io/kubectl/pkg/drain"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// Plan computes what a drain of the named nodes would do, changing nothing: kubectl's pod
// filters per node (DaemonSet, mirror, emptyDir, unmanaged and completed pods, with
// kubectl's own messages), then a cumulative simulation of the evictions against every
// PDB's current status. A name that is not a node is a NodeNotFoundError.
func (e *Engine) Plan(ctx context.Context, names []string) (*event.Plan, error) {
	pf, err := e.preflight(ctx, names)
	if err != nil {
		return nil, err
	}
	return pf.plan, nil
}

// preflight plans a drain of names, changing nothing: the nodes (readNodes), the drain
// order's rules, each node's pods as kubectl's filters choose them (planNode), then the
// simulation of the evictions against the budgets and what follows from it (simulate).
func (e *Engine) preflight(ctx context.Context, names []string) (*preflight, error) {
	if len(names) == 0 {
		return nil, &ConfigError{msg: "no nodes to drain"}
	}
	pf := &preflight{plan: &event.Plan{}, nodes: map[string]*corev1.Node{}, pods: map[string][]*corev1.Pod{},
		daemonSets: newDaemonSets(e.cfg.Client, e.cfg.ChunkSize, e.cfg.Clock)}
	allNodes, ordered, err := e.readNodes(ctx, pf, names)
	if err != nil {
		return nil, err
	}
	helper, sink, rulesWarning, err := e.podFilters(ctx, pf, len(ordered))
	if err != nil {
		return nil, err
	}
	var all []*corev1.Pod
	nodePlans := map[string]*event.NodePlan{}
	for _, name := range ordered {
		np, err := e.planNode(pf, helper, name, &all)
		if err != nil {
			return nil, err
		}
		if rulesWarning != "" && len(pf.plan.Nodes) == 0 {
			np.Warnings = append(np.Warnings, rulesWarning)
		}
		nodePlans[name] = np
		pf.plan.Nodes = append(pf.plan.Nodes, *np)
	}
	if err := e.simulate(ctx, pf, all, allNodes, nodePlans, sink); err != nil {
		return nil, err
	}
	return pf, e.surgePlan(ctx, pf)
}

// podFilters loads the drain order's rules and returns kubectl's pod filters for the
// plan (their rule sink, and the rules' warning), served by pf's DaemonSets and, for
// many nodes, by one list of every pod instead of one per node (planlist.go).
func (e *Engine) podFilters(ctx context.Context, pf *preflight, nodes int) (*kubectldrain.Helper, *ruleSink, string, error) {
	rules, rulesWarning, err := e.loadOrder(ctx) // order.go
	if err != nil {
		return nil, nil, "", err
	}
	e.rules.Store(rules)
	sink := &ruleSink{}
	helper := e.kubectlHelperWith(ctx, sink)
	helper.Client = pf.daemonSets.client(helper.Client)
	if sharedPodsFor(nodes, nodes) {
		if pf.listed, pf.listedRV, err = e.listPodsByNode(ctx, pf.named()); err != nil {
			return nil, nil, "", err
		}
	}
	return helper, sink, rulesWarning, nil
}

// readNodes lists every node once (the named ones, and where replacements may go) and
// records the named nodes, deduplicated in the order given, in pf. A name that is no node
// is a NodeNotFoundError.
func (e *Engine) readNodes(ctx context.Context, pf *preflight, names []string) (all []*corev1.Node, ordered []string, err error) {
	nodeList, err := e.cfg.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("list nodes: %w", err)
	}
	all = make([]*corev1.Node, len(nodeList.Items))
	byName := make(map[string]*corev1.Node, len(nodeList.Items))
	for i := range nodeList.Items {
		all[i] = &nodeList.Items[i]
		byName[all[i].Name] = all[i]
	}
	for _, name := range names {
		if pf.nodes[name] != nil {
			continue
		}
		n := byName[name]
		if n == nil {
			return nil, nil, &NodeNotFoundError{Name: name}
		}
		pf.nodes[name] = n
		ordered = append(ordered, name)
	}
	return all, ordered, nil
}

// named is the set of the plan's nodes.
func (pf *preflight) named() map[string]bool {
	out := make(map[string]bool, len(pf.nodes))
	for name := range pf.nodes {
		out[name] = true
	}
	return out
}

// planNode is one node's plan before the simulation: kubectl's filters' pods (recorded in
// pf.pods and appended to all), their errors, and the warnings a person needs.
func (e *Engine) planNode(pf *preflight, helper *kubectldrain.Helper, name string, all *[]*corev1.Pod) (*event.NodePlan, error) {
	np := &event.NodePlan{Name: name, AlreadyCordoned: pf.nodes[name].Spec.Unschedulable}
	if Disrupting(pf.nodes[name]) {
		np.Warnings = append(np.Warnings, DisruptingWarning)
	}
	h := helper
	if pf.listed != nil {
		hc := *helper // the same filters (the rule sink too), served from the one list
		hc.Client = podsFrom{Interface: helper.Client, pods: pf.listed[name]}
		h = &hc
	}
	list, errs := h.GetPodsForDeletion(name)
	if list == nil && len(errs) > 0 {
		return nil, fmt.Errorf("list pods on node %s: %w", name, errs[0])
	}
	for _, err := range errs {
		np.Errors = append(np.Errors, err.Error())
	}
	sort.Strings(np.Errors) // kubectl builds them in map order
	np.Warnings = append(np.Warnings, splitWarnings(list.Warnings())...)
	var scratch, tolerating []string
	for _, p := range list.Pods() {
		if tol := cordonToleration(&p); tol != "" && metav1.GetControllerOf(&p) != nil {
			tolerating = append(tolerating, fmt.Sprintf("%s/%s (%s)", p.Namespace, p.Name, tol))
		}
		p := p
		pf.pods[name] = append(pf.pods[name], &p)
		*all = append(*all, &p)
		if hasEmptyDir(&p) && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			scratch = append(scratch, p.Namespace+"/"+p.Name)
		}
	}
	np.Warnings = append(np.Warnings, podWarnings(np.Warnings, scratch, tolerating)...)
	return np, nil
}

// podWarnings are the warnings kubectl does not give: pods with local storage (kubectl's
// own warning is dropped by its later filters for pods that have a controller; a person
// still needs to know the data goes) and pods that tolerate the cordon.
func podWarnings(have []string, scratch, tolerating []string) []string {
	var out []string
	if len(scratch) > 0 && !strings.Contains(strings.Join(have, ";"), "local storage") {
		out = append(out, "deleting Pods with local storage (their emptyDir data is lost): "+strings.Join(scratch, ", "))
	}
	if len(tolerating) > 0 {
		out = append(out, "Pods that tolerate node.kubernetes.io/unschedulable are evicted once; a replacement that comes back to the node is reported (ReturnedToNode), not evicted again: "+strings.Join(tolerating, ", "))
	}
	return out
}

// simulate runs the evictions of all against every budget's current status (the waves,
// each node's steps), then what the plan says from it: the drain rules' and order's
// steps, why each blocked pod waits, dead nodes and force, and the ETA.
func (e *Engine) simulate(ctx context.Context, pf *preflight, all []*corev1.Pod, allNodes []*corev1.Node, nodePlans map[string]*event.NodePlan, sink *ruleSink) error {
	pdbs, err := e.listPDBs(ctx)
	if err != nil {
		return err
	}
	sim := pdb.Simulate(all, pdb.NewIndex(pdbs), pdb.Placeable(allNodes, pf.named()))
	pf.plan.Waves = sim.Waves
	for _, s := range sim.Steps {
		node := s.Pod.Spec.NodeName
		nodePlans[node].Steps = append(nodePlans[node].Steps, s)
	}
	e.ruleSteps(nodePlans, sink)
	e.orderPlan(nodePlans, pf.pods, sink) // order.go
	e.explainPlan(ctx, nodePlans, pdbs)
	e.planDeadAndForce(pf, nodePlans) // deadnode.go
	for i := range pf.plan.Nodes {
		pf.plan.Nodes[i] = *nodePlans[pf.plan.Nodes[i].Name]
	}
	pf.plan.ETA = EstimateETA(pf.plan, e.cfg.GracePeriodSeconds)
	return nil
}

// kubectlHelper is kubectl's drain helper, used only for its pod filters and cordoning.
func (e *Engine) kubectlHelper(ctx context.Context) *kubectldrain.Helper {
	return e.kubectlHelperWith(ctx, nil)
}

// kubectlHelperWith is kubectlHelper whose drain-rule filter records into sink.
func (e *Engine) kubectlHelperWith(ctx context.Context, sink *ruleSink) *kubectldrain.Helper {
	extra := []kubectldrain.PodFilter{mirrorByOwner}
	if only := e.cfg.Only; only != nil {
		extra = append(extra, func(p corev1.Pod) kubectldrain.PodDeleteStatus {
			if only(&p) {
				return kubectldrain.MakePodDeleteStatusOkay()
			}
			return kubectldrain.MakePodDeleteStatusSkip()
		})
	}
	extra = append(extra, e.ruleFilter(sink))
	return &kubectldrain.Helper{
		AdditionalFilters:               []kubectldrain.PodFilter{keepWarnings(extra)},
		Ctx:                             ctx,
		Client:                          e.cfg.Client,
		Force:                           e.cfg.Force,
		GracePeriodSeconds:              e.cfg.GracePeriodSeconds,
		IgnoreAllDaemonSets:             e.cfg.IgnoreDaemonSets,
		DeleteEmptyDirData:              e.cfg.DeleteEmptyDirData,
		PodSelector:                     e.cfg.PodSelector,
		ChunkSize:                       e.cfg.ChunkSize,
		SkipWaitForDeleteTimeoutSeconds: e.cfg.SkipWaitForDeleteTimeoutSeconds,
	}
}

// mirrorByOwner skips a pod owned by its Node: a static pod's mirror, whether or not it
// carries the mirror annotation kubectl's filter reads (the kubelet sets both; Karpenter
// reads the owner).
func mirrorByOwner(p corev1.Pod) kubectldrain.PodDeleteStatus {
	for _, ref := range p.OwnerReferences {
		if ref.Kind == "Node" && ref.APIVersion == "v1" && ref.Name == p.Spec.NodeName {
			return kubectldrain.MakePodDeleteStatusSkip()
		}
	}
	return kubectldrain.MakePodDeleteStatusOkay()
}

// unmanagedWarning is kubectl's warning for a pod without a controller deleted under
// --force (k8s.io/kubectl/pkg/drain does not export it).
const unmanagedWarning = "deleting Pods that declare no controller"

// splitWarnings turns kubectl's one-line warning ("kind: pods; kind: pods", its kinds in
// map order, so different from run to run) into one warning per kind, sorted, so the
// same cluster always gives the same output. A piece that does not end in its pods (a
// message of its own that holds "; ") stays with the piece before it.
func splitWarnings(w string) []string {
	if w == "" {
		return nil
	}
	var kinds []string
	for _, piece := range strings.Split(w, "; ") {
		if n := len(kinds); n > 0 && !strings.Contains(kinds[n-1], ": ") {
			kinds[n-1] += "; " + piece
			continue
		}
		kinds = append(kinds, piece)
	}
	sort.Strings(kinds)
	return kinds
}

// keepWarnings runs filters as one of kubectl's AdditionalFilters. kubectl keeps only the
// status of the last filter a pod passes, so an extra filter that lets a pod through would
// erase the warning of kubectl's last own filter (a pod without a controller deleted
// under --force): a pod every filter lets through gets that warning back.
func keepWarnings(filters []kubectldrain.PodFilter) kubectldrain.PodFilter {
	return func(p corev1.Pod) kubectldrain.PodDeleteStatus {
		for _, f := range filters {
			if st := f(p); !st.Delete || st.Reason != kubectldrain.PodDeleteStatusTypeOkay {
				return st
			}
		}
		finished := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
		if !finished && metav1.GetControllerOf(&p) == nil {
			return kubectldrain.MakePodDeleteStatusWithWarning(true, unmanagedWarning)
		}
		return kubectldrain.MakePodDeleteStatusOkay()
	}
}

func (e *Engine) listPDBs(ctx context.Context) ([]*policyv1.PodDisruptionBudget, error) {
	list, err := e.cfg.Client.PolicyV1().PodDisruptionBudgets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list poddisruptionbudgets: %w", err)
	}
	out := make([]*policyv1.PodDisruptionBudget, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

func hasEmptyDir(p *corev1.Pod) bool {
	for _, v := range p.Spec.Volumes {
		if v.EmptyDir != nil {
			return true
		}
	}
	return false
}

// sharedPodsAt is the number of nodes drained at once from which a run watches pods
// through one informer over every pod (one list, one watch connection, whatever the
// number of nodes) instead of one informer per node being drained (a list and a watch per
// node). Below it, the per-node informers cost less than holding every pod of a large
// cluster.
const sharedPodsAt = 8

// sharedPodsFor reports whether a drain of nodes, maxParallel at a time, shares one pod
// informer (and one pod list for its plan).
func sharedPodsFor(nodes, maxParallel int) bool { return min(nodes, maxParallel) >= sharedPodsAt }
