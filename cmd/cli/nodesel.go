package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// NodeSelection is how a command names its nodes: NODE... or -l/--selector, not both.
type NodeSelection struct {
	Names    []string
	Selector string
	// Pool selects the members of a NodePool (node-role.kubernetes.io/<pool>).
	Pool string
}

// AddFlags adds -l/--selector and --pool (whose values complete from the cluster's pools).
func (s *NodeSelection) AddFlags(cmd *cobra.Command, c *Common) {
	cmd.Flags().StringVarP(&s.Selector, "selector", "l", s.Selector, "label selector of the nodes (instead of NODE names)")
	cmd.Flags().StringVar(&s.Pool, "pool", s.Pool, "every node of this NodePool (instead of NODE names)")
	_ = cmd.RegisterFlagCompletionFunc("pool", completePools(c))
}

// completePools completes NodePool names from the cluster the flags point at.
func completePools(c *Common) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		pc, err := c.PoolClient()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		list := &v1alpha1.NodePoolList{}
		if err := pc.List(cmd.Context(), list); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for i := range list.Items {
			out = append(out, list.Items[i].Name)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// Validate checks the selection without calling the API.
func (s *NodeSelection) Validate() error {
	given := 0
	for _, g := range []bool{len(s.Names) > 0, s.Selector != "", s.Pool != ""} {
		if g {
			given++
		}
	}
	switch {
	case given > 1:
		return UsageErrorf("give node names, --selector or --pool, only one of them")
	case given == 0:
		return UsageErrorf("no nodes given: name them (NODE...), or use --selector or --pool")
	}
	for _, n := range s.Names {
		if n == "" {
			return UsageErrorf("empty node name")
		}
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			return UsageErrorf("invalid node name %q: %s", n, strings.Join(errs, "; "))
		}
	}
	return ValidateSelector("--selector", s.Selector)
}

// ValidateSelector checks a label selector flag without calling the API: a bad one is a
// usage error (exit 2) naming the flag.
func ValidateSelector(flag, sel string) error {
	if _, err := labels.Parse(sel); err != nil {
		return UsageErrorf("invalid %s %q: %v", flag, sel, err)
	}
	return nil
}

// Resolve returns the node names, sorted for a selector and as given (deduplicated) for
// names. An unknown node or a selector that matches nothing is a usage error, found before
// anything is changed.
func (s *NodeSelection) Resolve(ctx context.Context, cs kubernetes.Interface, c *Common) ([]string, *v1alpha1.NodePool, error) {
	var pool *v1alpha1.NodePool
	if s.Pool != "" {
		pc, err := c.PoolClient()
		if err != nil {
			return nil, nil, err
		}
		if pool, err = nodepool.GetPool(ctx, pc, s.Pool); err != nil {
			return nil, nil, WithExitCode(ExitCode(err), err)
		}
		names, err := s.list(ctx, cs, nodepool.RoleLabel(s.Pool))
		if err != nil {
			return nil, nil, err
		}
		if len(names) == 0 {
			return nil, nil, UsageErrorf("pool %q has no nodes", s.Pool)
		}
		return names, pool, nil
	}
	names, err := s.resolve(ctx, cs)
	return names, nil, err
}

func (s *NodeSelection) list(ctx context.Context, cs kubernetes.Interface, selector string) ([]string, error) {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("list nodes matching %q: %w", selector, err)
	}
	names := make([]string, len(list.Items))
	for i := range list.Items {
		names[i] = list.Items[i].Name
	}
	sort.Strings(names)
	return names, nil
}

func (s *NodeSelection) resolve(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
	if s.Selector != "" {
		names, err := s.list(ctx, cs, s.Selector)
		if err != nil {
			return nil, err
		}
		if len(names) == 0 {
			return nil, UsageErrorf("no nodes match selector %q", s.Selector)
		}
		return names, nil
	}
	seen := map[string]bool{}
	var names []string
	for _, n := range s.Names {
		if seen[n] {
			continue
		}
		seen[n] = true
		if _, err := cs.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, UsageErrorf("node %q not found", n)
			}
			return nil, fmt.Errorf("get node %s: %w", n, err)
		}
		names = append(names, n)
	}
	return names, nil
}

// completeNodes completes node names from the cluster the flags point at.
func completeNodes(c *Common) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cs, err := c.Client()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		list, err := cs.CoreV1().Nodes().List(cmd.Context(), metav1.ListOptions{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		given := map[string]bool{}
		for _, a := range args {
			given[a] = true
		}
		var out []cobra.Completion
		for i := range list.Items {
			if n := list.Items[i].Name; !given[n] {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
