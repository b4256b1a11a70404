package cli

import (
	"context"
	"fmt"
	"sort"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// NodeSelection is how a command names its nodes: NODE... or -l/--selector, not both.
type NodeSelection struct {
	Names    []string
	Selector string
}

// AddFlags adds -l/--selector.
func (s *NodeSelection) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&s.Selector, "selector", "l", s.Selector, "label selector of the nodes (instead of NODE names)")
}

// Validate checks the selection without calling the API.
func (s *NodeSelection) Validate() error {
	switch {
	case len(s.Names) > 0 && s.Selector != "":
		return UsageErrorf("give node names or --selector, not both")
	case len(s.Names) == 0 && s.Selector == "":
		return UsageErrorf("no nodes given: name them (NODE...) or use --selector")
	}
	if s.Selector != "" {
		if _, err := labels.Parse(s.Selector); err != nil {
			return UsageErrorf("invalid --selector %q: %v", s.Selector, err)
		}
	}
	for _, n := range s.Names {
		if n == "" {
			return UsageErrorf("empty node name")
		}
	}
	return nil
}

// Resolve returns the node names, sorted for a selector and as given (deduplicated) for
// names. An unknown node or a selector that matches nothing is a usage error, found before
// anything is changed.
func (s *NodeSelection) Resolve(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
	if s.Selector != "" {
		list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: s.Selector})
		if err != nil {
			return nil, fmt.Errorf("list nodes matching %q: %w", s.Selector, err)
		}
		if len(list.Items) == 0 {
			return nil, UsageErrorf("no nodes match selector %q", s.Selector)
		}
		names := make([]string, len(list.Items))
		for i := range list.Items {
			names[i] = list.Items[i].Name
		}
		sort.Strings(names)
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
