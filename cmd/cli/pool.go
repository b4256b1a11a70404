package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-maintenance/kubectl-maintenance/config/crd"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// NewCmdPool builds "kubectl maintenance pool" and its subcommands.
func NewCmdPool(c *Common) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pool",
		Short: "Node pools: the NodePool resource, moving nodes between pools, syncing labels, taints and RuntimeClasses",
		Long: `A NodePool (maintenance.kubectl-maintenance.io/v1alpha1) is a cluster-scoped pool of nodes:
a node is in pool X when it carries node-role.kubernetes.io/X="". The pool puts its
labels and taints on its nodes, recording on each node exactly what it applied
(annotation nodepool.kubectl-maintenance.io/<pool>), so that leaving the pool removes
exactly that and nothing another owner set. A pool with spec.runtimeClass gets a
RuntimeClass named after it, so a pod picks the pool with runtimeClassName alone.`,
		Args: noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCmdPoolInstall(c), newCmdPoolList(c), newCmdPoolGet(c), newCmdPoolApply(c),
		newCmdPoolDelete(c), NewCmdPoolMove(c), newCmdPoolSync(c), newCmdPoolController(c))
	return cmd
}

// poolClients returns the clientset and the NodePool client.
func poolClients(c *Common) (kubernetes.Interface, client.Client, error) {
	cs, err := c.Client()
	if err != nil {
		return nil, nil, err
	}
	pc, err := c.PoolClient()
	return cs, pc, err
}

func newCmdPoolInstall(c *Common) *cobra.Command {
	return &cobra.Command{
		Use:   "install",
		Short: "Install (or update) the NodePool CustomResourceDefinition; safe to run again",
		Args:  noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, pc, err := poolClients(c)
			if err != nil {
				return err
			}
			verb, err := InstallCRD(cmd.Context(), pc)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.Out, "customresourcedefinition.apiextensions.k8s.io/nodepools.maintenance.kubectl-maintenance.io %s\n", verb)
			return nil
		},
	}
}

// InstallCRD creates or updates the NodePool CRD and waits until it is Established. It
// returns "created", "configured" or "unchanged".
func InstallCRD(ctx context.Context, c client.Client) (string, error) {
	want := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(crd.NodePools, want); err != nil {
		return "", fmt.Errorf("decode the embedded NodePool CRD: %w", err)
	}
	cur := &apiextensionsv1.CustomResourceDefinition{}
	verb := "created"
	err := c.Get(ctx, types.NamespacedName{Name: want.Name}, cur)
	switch {
	case apierrors.IsNotFound(err):
		if err := c.Create(ctx, want); err != nil {
			return "", fmt.Errorf("create the NodePool CRD: %w", err)
		}
	case err != nil:
		return "", fmt.Errorf("get the NodePool CRD: %w", err)
	default:
		before, _ := json.Marshal(cur.Spec)
		cur.Spec = want.Spec
		after, _ := json.Marshal(cur.Spec)
		verb = "unchanged"
		if string(before) != string(after) {
			verb = "configured"
			if err := c.Update(ctx, cur); err != nil {
				return "", fmt.Errorf("update the NodePool CRD: %w", err)
			}
		}
	}
	// Establishing takes the API server a moment; there is no watch in controller-runtime's
	// plain client, so look every 100 ms for at most 30 s.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, types.NamespacedName{Name: want.Name}, got); err != nil {
			return false, nil
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("wait for the NodePool CRD to be established: %w", err)
	}
	return verb, nil
}

func newCmdPoolList(c *Common) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List pools: nodes, nodes in maintenance, taints, RuntimeClass handler",
		Args:    noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cs, pc, err := poolClients(c)
			if err != nil {
				return err
			}
			return listPools(cmd.Context(), c.Out, cs, pc)
		},
	}
}

func listPools(ctx context.Context, w io.Writer, cs kubernetes.Interface, pc client.Client) error {
	pools := &v1alpha1.NodePoolList{}
	if err := pc.List(ctx, pools); err != nil {
		if nodepool.IsNotInstalled(err) {
			return nodepool.ErrNotInstalled
		}
		return fmt.Errorf("list pools: %w", err)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "NAME\tNODES\tMAINTENANCE\tTAINTS\tHANDLER\tAGE")
	sort.Slice(pools.Items, func(i, j int) bool { return pools.Items[i].Name < pools.Items[j].Name })
	for i := range pools.Items {
		p := &pools.Items[i]
		members, maint := 0, 0
		for j := range nodes.Items {
			n := &nodes.Items[j]
			if _, ok := n.Labels[nodepool.RoleLabel(p.Name)]; ok {
				members++
				if n.Spec.Unschedulable {
					maint++
				}
			}
		}
		var taints []string
		for _, t := range p.Spec.Taints {
			taints = append(taints, fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect))
		}
		handler := "<none>"
		if p.Spec.RuntimeClass != nil {
			handler = p.Spec.RuntimeClass.Handler
		}
		fmt.Fprintf(tw, "%s\t%d\t%d/%d\t%s\t%s\t%s\n", p.Name, members, maint, p.MaxUnavailableOrDefault(),
			orNone(strings.Join(taints, ",")), handler, duration.HumanDuration(time.Since(p.CreationTimestamp.Time)))
	}
	return tw.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func newCmdPoolGet(c *Common) *cobra.Command {
	output := "yaml"
	cmd := &cobra.Command{
		Use:   "get POOL",
		Short: "Print a pool as YAML or JSON",
		Args:  exactlyOnePool,
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "yaml" && output != "json" {
				return UsageErrorf(`invalid --output %q: must be "yaml" or "json"`, output)
			}
			_, pc, err := poolClients(c)
			if err != nil {
				return err
			}
			p, err := nodepool.GetPool(cmd.Context(), pc, args[0])
			if err != nil {
				return err
			}
			p.ManagedFields = nil
			p.APIVersion, p.Kind = v1alpha1.GroupVersion.String(), "NodePool"
			var b []byte
			if output == "json" {
				b, err = json.MarshalIndent(p, "", "  ")
				b = append(b, '\n')
			} else {
				b, err = yaml.Marshal(p)
			}
			if err != nil {
				return fmt.Errorf("encode pool: %w", err)
			}
			_, err = c.Out.Write(b)
			return err
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", output, `"yaml" or "json"`)
	return cmd
}

func exactlyOnePool(_ *cobra.Command, args []string) error {
	if len(args) != 1 {
		return UsageErrorf("give exactly one pool name, got %d", len(args))
	}
	return nil
}

func newCmdPoolApply(c *Common) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "apply -f FILE",
		Short: "Create or update a pool from a YAML file (- for stdin), then apply it to its nodes",
		Args:  noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return UsageErrorf("give the pool file with -f FILE (or -f - for stdin)")
			}
			want, err := readPool(file, c.In)
			if err != nil {
				return err
			}
			cs, pc, err := poolClients(c)
			if err != nil {
				return err
			}
			verb, err := applyPool(cmd.Context(), pc, want)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.Out, "nodepool.maintenance.kubectl-maintenance.io/%s %s\n", want.Name, verb)
			return syncOne(cmd.Context(), c, cs, pc, want.Name)
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", file, "the pool's YAML file, or - for stdin")
	return cmd
}

// readPool decodes one NodePool strictly: an unknown field is an error.
func readPool(file string, stdin io.Reader) (*v1alpha1.NodePool, error) {
	var b []byte
	var err error
	if file == "-" {
		b, err = io.ReadAll(stdin)
	} else {
		b, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, UsageErrorf("read pool file: %v", err)
	}
	p := &v1alpha1.NodePool{}
	if err := yaml.UnmarshalStrict(b, p); err != nil {
		return nil, UsageErrorf("invalid pool file %s: %v", file, err)
	}
	if p.Kind != "NodePool" || p.APIVersion != v1alpha1.GroupVersion.String() {
		return nil, UsageErrorf("invalid pool file %s: want apiVersion %s and kind NodePool, got %q %q", file, v1alpha1.GroupVersion, p.APIVersion, p.Kind)
	}
	if p.Name == "" {
		return nil, UsageErrorf("invalid pool file %s: metadata.name is required", file)
	}
	return p, nil
}

// applyPool creates the pool or updates its spec. The API server's validation (CRD
// schema and CEL rules) answers 422, surfaced as a usage error.
func applyPool(ctx context.Context, pc client.Client, want *v1alpha1.NodePool) (string, error) {
	cur := &v1alpha1.NodePool{}
	err := pc.Get(ctx, types.NamespacedName{Name: want.Name}, cur)
	verb := "created"
	switch {
	case nodepool.IsNotInstalled(err):
		return "", nodepool.ErrNotInstalled
	case apierrors.IsNotFound(err):
		want.ResourceVersion = ""
		err = pc.Create(ctx, want)
	case err != nil:
		return "", fmt.Errorf("get pool %s: %w", want.Name, err)
	default:
		before, _ := json.Marshal(cur.Spec)
		after, _ := json.Marshal(want.Spec)
		verb = "unchanged"
		if string(before) != string(after) {
			verb = "configured"
			cur.Spec = want.Spec
			cur.Labels, cur.Annotations = mergeMaps(cur.Labels, want.Labels), mergeMaps(cur.Annotations, want.Annotations)
			err = pc.Update(ctx, cur)
		}
	}
	if apierrors.IsInvalid(err) {
		return "", UsageErrorf("%s", invalidMessage(err))
	}
	if err != nil {
		return "", fmt.Errorf("apply pool %s: %w", want.Name, err)
	}
	return verb, nil
}

// invalidMessage is the API server's validation answer on one line.
func invalidMessage(err error) string {
	var se *apierrors.StatusError
	if e, ok := err.(*apierrors.StatusError); ok {
		se = e
	}
	if se == nil || se.ErrStatus.Details == nil || len(se.ErrStatus.Details.Causes) == 0 {
		return err.Error()
	}
	var parts []string
	for _, c := range se.ErrStatus.Details.Causes {
		parts = append(parts, fmt.Sprintf("%s: %s", c.Field, c.Message))
	}
	return fmt.Sprintf("pool %q is invalid: %s", se.ErrStatus.Details.Name, strings.Join(parts, "; "))
}

func mergeMaps(a, b map[string]string) map[string]string {
	if len(b) == 0 {
		return a
	}
	if a == nil {
		a = map[string]string{}
	}
	for k, v := range b {
		a[k] = v
	}
	return a
}
