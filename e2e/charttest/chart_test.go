package charttest

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

const (
	release = "kubectl-maintenance"
	name    = "kubectl-maintenance-controller"
)

// Issue 41, test 2: the chart installed by Helm's SDK in a namespace of its own, a drain
// carried out by a controller process started with the Deployment's arguments and as its
// ServiceAccount (so the chart's RBAC is what the run uses), the chart upgraded with
// changed values while the Maintenance and the CRDs stay, and uninstalled: everything it
// installed is gone but the CRDs it keeps (crds.keep) with the objects in them.
func TestChartInstallUpgradeUninstall(t *testing.T) {
	e := fixture.NewEnv(t, shared, plugin, "a", "spare")
	helm := buildHelmchart(t)
	ns := e.NS + "-system"
	if _, err := e.C.CoreV1().Namespaces().Create(e.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.C.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	do := func(cmd string, sets ...string) string {
		t.Helper()
		args := []string{cmd, "-kubeconfig", shared.Kubeconfig, "-namespace", ns, "-release", release}
		for _, s := range sets {
			args = append(args, "-set", s)
		}
		out, err := exec.CommandContext(e.Ctx, helm, args...).CombinedOutput()
		t.Logf("$ helmchart %s\n%s", strings.Join(args, " "), out)
		if err != nil {
			t.Fatalf("helmchart %s: %v", cmd, err)
		}
		return string(out)
	}

	do("install", "leaderElection.leaseDuration=15s")
	d, err := e.C.AppsV1().Deployments(ns).Get(e.Ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	args := d.Spec.Template.Spec.Containers[0].Args
	if !contains(args, "--leader-election-namespace="+ns) || !contains(args, "--leader-election-lease-duration=15s") {
		t.Errorf("the Deployment's args %v: want the release's namespace for the Lease and the lease duration set", args)
	}

	// The controller as the Deployment runs it: its arguments (the probe and metrics
	// addresses freed, this is a process on the test's machine) and its ServiceAccount.
	ctlArgs := []string{"--kubeconfig", shared.Kubeconfig, "--as", "system:serviceaccount:" + ns + ":" + name}
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "--health-probe-bind-address="), strings.HasPrefix(a, "--metrics-bind-address="):
			a = a[:strings.Index(a, "=")+1] + "0"
		}
		ctlArgs = append(ctlArgs, a)
	}
	ctx, stop := context.WithCancel(e.Ctx)
	ctl := exec.CommandContext(ctx, plugin, ctlArgs...)
	logs := &fixture.SyncBuffer{}
	ctl.Stderr = logs
	if err := ctl.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop()
		_ = ctl.Wait()
		if t.Failed() {
			t.Logf("controller log:\n%s", logs.String())
		}
	})

	e.AddNodes(0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 3, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 3)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(1)
	mname := e.NS + "-drain"
	if r := e.Run("drain", "--server-side", "--name", mname, e.Nodes[0], "--ignore-daemonsets"); r.Code != 0 {
		t.Fatalf("drain --server-side under the chart's controller: exit %d, want 0\n%s", r.Code, r.Stderr)
	}
	if pods := e.PodsOn(e.Nodes[0]); len(pods) != 0 {
		t.Errorf("%d pods left on %s", len(pods), e.Nodes[0])
	}

	do("upgrade", "leaderElection.leaseDuration=20s", "replicas=1", "userRoles.enabled=false")
	d, err = e.C.AppsV1().Deployments(ns).Get(e.Ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 1 || !contains(d.Spec.Template.Spec.Containers[0].Args, "--leader-election-lease-duration=20s") {
		t.Errorf("after the upgrade: replicas %d, args %v; want 1 and the new lease duration", *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Args)
	}
	if _, err := e.C.RbacV1().ClusterRoles().Get(e.Ctx, "kubectl-maintenance-view", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("userRoles.enabled=false: the view role is still there (%v)", err)
	}
	mnt := maintenances(t)
	if _, err := mnt.Get(e.Ctx, mname, metav1.GetOptions{}); err != nil {
		t.Errorf("the Maintenance after the upgrade: %v", err)
	}

	do("uninstall")
	gone := map[string]func() error{
		"deployment": func() error { _, err := e.C.AppsV1().Deployments(ns).Get(e.Ctx, name, metav1.GetOptions{}); return err },
		"serviceaccount": func() error {
			_, err := e.C.CoreV1().ServiceAccounts(ns).Get(e.Ctx, name, metav1.GetOptions{})
			return err
		},
		"clusterrole": func() error { _, err := e.C.RbacV1().ClusterRoles().Get(e.Ctx, name, metav1.GetOptions{}); return err },
		"clusterrolebinding": func() error {
			_, err := e.C.RbacV1().ClusterRoleBindings().Get(e.Ctx, name, metav1.GetOptions{})
			return err
		},
		"pdb": func() error {
			_, err := e.C.PolicyV1().PodDisruptionBudgets(ns).Get(e.Ctx, name, metav1.GetOptions{})
			return err
		},
		"validatingadmissionpolicy": func() error {
			_, err := e.C.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(e.Ctx, "kubectl-maintenance-requester-rights", metav1.GetOptions{})
			return err
		}, "validatingadmissionpolicybinding": func() error {
			_, err := e.C.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(e.Ctx, "kubectl-maintenance-requester-rights", metav1.GetOptions{})
			return err
		},
	}
	for what, get := range gone {
		if err := get(); !apierrors.IsNotFound(err) {
			t.Errorf("after uninstall, %s %s: %v, want not found", what, name, err)
		}
	}
	if _, err := mnt.Get(e.Ctx, mname, metav1.GetOptions{}); err != nil {
		t.Errorf("the Maintenance after uninstall (its CRD kept): %v", err)
	}
}

func maintenances(t *testing.T) dynamic.ResourceInterface {
	t.Helper()
	dc, err := dynamic.NewForConfig(shared.Config)
	if err != nil {
		t.Fatal(err)
	}
	return dc.Resource(mntv1.GroupVersion.WithResource("maintenances"))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// buildHelmchart builds hack/chart's helmchart (Helm's SDK, a module of its own).
func buildHelmchart(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "helmchart")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./helmchart")
	cmd.Dir = filepath.Join("..", "..", "hack", "chart")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build helmchart: %v\n%s", err, out)
	}
	return bin
}
