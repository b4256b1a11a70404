// Command helmchart packages the chart for a release and installs, upgrades and
// uninstalls it with Helm's Go SDK (the e2e tests run it against the local cluster):
//
//	helmchart package -version vX.Y.Z -out DIR
//	helmchart render|install|upgrade|uninstall -kubeconfig F -namespace NS [-set k=v ...]
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/kubectl-maintenance/kubectl-maintenance/hack/chart"
)

type sets []string

func (s *sets) String() string     { return strings.Join(*s, ",") }
func (s *sets) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: helmchart package|render|install|upgrade|uninstall [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	version := fs.String("version", "", "package: the plugin's version (vX.Y.Z)")
	out := fs.String("out", "dist", "package: the directory to write the chart archive into")
	kubeconfig := fs.String("kubeconfig", "", "the cluster's kubeconfig")
	ns := fs.String("namespace", "kube-system", "the release's namespace")
	release := fs.String("release", "kubectl-maintenance", "the release's name")
	var vals sets
	fs.Var(&vals, "set", "a value, as helm --set (repeat)")
	_ = fs.Parse(os.Args[2:])
	if err := run(os.Args[1], *version, *out, *kubeconfig, *ns, *release, vals); err != nil {
		fmt.Fprintf(os.Stderr, "helmchart %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func run(cmd, version, out, kubeconfig, ns, release string, set []string) error {
	if cmd == "package" {
		path, err := chart.Package(chart.Dir(), version, out)
		if err != nil {
			return err
		}
		fmt.Println(path)
		return nil
	}
	vals, err := chart.Values(set...)
	if err != nil {
		return err
	}
	switch cmd {
	case "render":
		m, err := chart.Render(chart.Dir(), release, ns, vals)
		if err != nil {
			return err
		}
		fmt.Print(m)
		return nil
	case "install", "upgrade", "uninstall":
		c := chart.Cluster{Kubeconfig: kubeconfig, Namespace: ns, Release: release}
		msg, err := c.Do(cmd, vals)
		if err != nil {
			return err
		}
		fmt.Println(msg)
		return nil
	}
	return fmt.Errorf("unknown command %q", cmd)
}
