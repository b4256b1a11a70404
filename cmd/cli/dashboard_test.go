package cli

import (
	"io"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/kubeargs"
)

func TestClusterFlagsKeepsClusterFlagsAndDropsCredentials(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"no cluster flag":                {nil, ""},
		"kubeconfig and context":         {[]string{"--kubeconfig", "/k/config", "--context=prod"}, "--context=prod --kubeconfig=/k/config"},
		"a path with a space is quoted":  {[]string{"--kubeconfig", "/my dir/config"}, "--kubeconfig='/my dir/config'"},
		"a token and verbosity are left": {[]string{"--token", "s3cr3t", "-v", "4", "--as", "jane"}, "--as=jane"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			root := NewRootCmd(genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
			cmd, _, err := root.Find([]string{"dashboard"})
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(kubeargs.ClusterFlags(cmd), " "); got != tc.want {
				t.Errorf("clusterFlags = %q, want %q", got, tc.want)
			}
		})
	}
}
