package kubeargs

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// ClusterFlags are the cluster flags the command was given
// (--kubeconfig, --context, ...; credentials never), for the commands the dashboard
// prints: they then act on the same cluster as the dashboard did.
func ClusterFlags(cmd *cobra.Command) []string {
	var out []string
	cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Changed || f.Name == "v" || noderecord.SecretFlag("--"+f.Name) {
			return
		}
		out = append(out, "--"+f.Name+"="+shellQuote(f.Value.String()))
	})
	return out
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@,+%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
