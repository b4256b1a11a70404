package drain

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubectldrain "k8s.io/kubectl/pkg/drain"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// preflight is what event.Plan learns before anything is touched.
type preflight struct {
	plan  *event.Plan
	nodes map[string]*corev1.Node
	// pods to evict, per node, as kubectl's filters chose them.
	pods map[string][]*corev1.Pod
	// daemonSets answers kubectl's filters from one list, for the plan and the run.
	daemonSets *daemonSets
	// permits is what the run will change besides nodes and evictions (see Permit).
	permits Permits
	// listed are the pods of the plan's nodes from its one list of every pod, at
	// resourceVersion listedRV, and under "" every other pod, trimmed (nil when the plan
	// listed node by node).
	listed   map[string][]any
	listedRV string
}

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

func (e *Engine) preflight(ctx context.Context, names []string) (*preflight, error) {
	if len(names) == 0 {
		return nil, &ConfigError{msg: "no nodes to drain"}
	}
	if _, err := labels.Parse(e.cfg.PodSelector); err != nil {
		return nil, &ConfigError{msg: fmt.Sprintf("invalid --pod-selector %q: %v", e.cfg.PodSelector, err)}
	}
	pf := &preflight{plan: &event.Plan{}, nodes: map[string]*corev1.Node{}, pods: map[string][]*corev1.Pod{},
		daemonSets: newDaemonSets(e.cfg.Client, e.cfg.ChunkSize, e.cfg.Clock)}
	// One list of the nodes serves both the named nodes and the placement of replacements.
	nodeList, err := e.cfg.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	allNodes := make([]*corev1.Node, len(nodeList.Items))
	byName := make(map[string]*corev1.Node, len(nodeList.Items))
	for i := range nodeList.Items {
		allNodes[i] = &nodeList.Items[i]
		byName[allNodes[i].Name] = allNodes[i]
	}
	seen := map[string]bool{}
	var ordered []string
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		n := byName[name]
		if n == nil {
			return nil, &NodeNotFoundError{Name: name}
		}
		pf.nodes[name] = n
		ordered = append(ordered, name)
	}
	rules, rulesWarning, err := e.loadOrder(ctx) // order.go
	if err != nil {
		return nil, err
	}
	e.rules.Store(rules)
	sink := &ruleSink{}
	helper := e.kubectlHelperWith(ctx, sink)
	helper.Client = pf.daemonSets.client(helper.Client)
	// Many nodes: one list of every pod instead of one per node (planlist.go).
	var listed map[string][]any
	if sharedPodsFor(len(ordered), len(ordered)) {
		if listed, pf.listedRV, err = e.listPodsByNode(ctx, seen); err != nil {
			return nil, err
		}
		pf.listed = listed // the run's pod informer starts from it (faststart.go)
	}
	var all []*corev1.Pod
	nodePlans := map[string]*event.NodePlan{}
	for _, name := range ordered {
		np := &event.NodePlan{Name: name, AlreadyCordoned: pf.nodes[name].Spec.Unschedulable}
		if Disrupting(pf.nodes[name]) {
			np.Warnings = append(np.Warnings, DisruptingWarning)
		}
		h := helper
		if listed != nil {
			hc := *helper // the same filters (the rule sink too), served from the one list
			hc.Client = podsFrom{Interface: helper.Client, pods: listed[name]}
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
			all = append(all, &p)
			if hasEmptyDir(&p) && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				scratch = append(scratch, p.Namespace+"/"+p.Name)
			}
		}
		// kubectl's own local-storage warning is dropped by its later filters for pods
		// that have a controller; a person still needs to know the data goes.
		if len(scratch) > 0 && !strings.Contains(strings.Join(np.Warnings, ";"), "local storage") {
			np.Warnings = append(np.Warnings, "deleting Pods with local storage (their emptyDir data is lost): "+strings.Join(scratch, ", "))
		}
		if len(tolerating) > 0 {
			np.Warnings = append(np.Warnings, "Pods that tolerate node.kubernetes.io/unschedulable are evicted once; a replacement that comes back to the node is reported (ReturnedToNode), not evicted again: "+strings.Join(tolerating, ", "))
		}
		if rulesWarning != "" && len(pf.plan.Nodes) == 0 {
			np.Warnings = append(np.Warnings, rulesWarning)
		}
		nodePlans[name] = np
		pf.plan.Nodes = append(pf.plan.Nodes, *np)
	}
	pdbs, err := e.listPDBs(ctx)
	if err != nil {
		return nil, err
	}
	sim := pdb.Simulate(all, pdb.NewIndex(pdbs), pdb.Placeable(allNodes, seen))
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
	return pf, e.surgePlan(ctx, pf)
}

// kubectlHelper is kubectl's drain helper, used only for its pod filters and cordoning.
func (e *Engine) kubectlHelper(ctx context.Context) *kubectldrain.Helper {
	return e.kubectlHelperWith(ctx, nil)
}

// kubectlHelperWith is kubectlHelper whose drain-rule filter records into sink.
func (e *Engine) kubectlHelperWith(ctx context.Context, sink *ruleSink) *kubectldrain.Helper {
	var extra []kubectldrain.PodFilter
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
