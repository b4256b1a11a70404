package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/completion"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/kubeargs"
)

// addDryRunFlag adds --dry-run as kubectl's AddDryRunFlag does: "none" by default, and a
// bare --dry-run sets "unchanged", which normalizeDryRun takes as "client" with kubectl's
// deprecation warning.
func addDryRunFlag(cmd *cobra.Command, v *string, usage string) {
	cmd.Flags().StringVar(v, "dry-run", *v, usage)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = kubeargs.DryRunUnchanged
	_ = cmd.RegisterFlagCompletionFunc("dry-run", completion.FixedChoices("none", "client", "server"))
}

// normalizeDryRun turns *v into "none", "client" or "server" as kubectl does (true, false
// and a bare flag included), writing kubectl's warning for a deprecated form to errOut.
func normalizeDryRun(errOut io.Writer, v *string) error {
	mode, warning, err := kubeargs.DryRunArg(*v)
	if err != nil {
		return err
	}
	if warning != "" && errOut != nil {
		fmt.Fprintf(errOut, "Warning: %s\n", warning)
	}
	*v = string(mode)
	return nil
}

// nodeObject is a bare Node named name: what -o name prints as node/NAME, the form every
// command that takes nodes takes back.
func nodeObject(name string) *corev1.Node {
	return &corev1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// poolArgs turns pool arguments (NAME, or nodepool.maintenance.kubectl-maintenance.io/NAME
// as pool get -o name prints) into pool names; see kubeargs.PoolArg.
func poolArgs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		n, err := kubeargs.PoolArg(a)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}
