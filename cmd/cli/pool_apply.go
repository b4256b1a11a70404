package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/manifest"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
)

// PoolApplyOptions is "pool apply -f": every NodePool document of the files, directories
// and stdin given, applied by server-side apply, then applied to its nodes.
type PoolApplyOptions struct {
	*Common
	Files []string
}

func newCmdPoolApplyFiles(c *Common) *cobra.Command {
	o := &PoolApplyOptions{Common: c}
	cmd := &cobra.Command{
		Use:   "apply -f FILE|DIR|- [-f ...]",
		Short: "Create or update pools from YAML (several documents, a directory, or - for stdin), then apply them to their nodes",
		Long: `Create or update NodePools by server-side apply, as kubectl apply --server-side does, then
apply each pool to its nodes. -f takes a file (any number of YAML documents separated by
---), a directory (its .yaml, .yml and .json files, not recursive) or - for stdin; it may
be repeated. Every document is read and checked before anything is applied: one bad
document is a usage error (exit 2) and nothing changes. Each pool is reported as created,
configured or unchanged, as the API server saw it.`,
		Example: `  kubectl maintenance pool apply -f pools.yaml
  kubectl maintenance pool apply -f pools/
  cat blue.yaml green.yaml | kubectl maintenance pool apply -f -`,
		Args: noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error {
			docs, err := o.read()
			if err != nil {
				return err
			}
			cs, pc, err := poolClients(c)
			if err != nil {
				return err
			}
			for _, d := range docs {
				res, err := nodepool.Apply(cmd.Context(), pc, d.Pool)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.Out, "nodepool.maintenance.kubectl-maintenance.io/%s %s\n", d.Pool.Name, res)
			}
			for _, d := range docs {
				if err := syncOne(cmd.Context(), c, cs, pc, d.Pool.Name); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVarP(&o.Files, "filename", "f", nil, "a pool file (several YAML documents allowed), a directory of them, or - for stdin")
	return cmd
}

// read reads and checks every document before anything is applied.
func (o *PoolApplyOptions) read() ([]nodepool.Document, error) {
	if len(o.Files) == 0 {
		return nil, UsageErrorf("give the pools with -f FILE, -f DIR or -f - (stdin)")
	}
	var docs []nodepool.Document
	err := manifest.Each(o.Files, o.In, "pool", func(name string, r io.Reader) error {
		d, err := nodepool.ReadPools(r, name)
		docs = append(docs, d...)
		return err
	})
	if err != nil {
		return nil, WithExitCode(ExitUsage, err)
	}
	if len(docs) == 0 {
		return nil, UsageErrorf("no NodePool found in %s", strings.Join(o.Files, ", "))
	}
	if err := nodepool.CheckDuplicates(docs); err != nil {
		return nil, WithExitCode(ExitUsage, err)
	}
	return docs, nil
}
