package mnttest

import (
	"context"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-maintenance/kubectl-maintenance/config/crd"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// Issue 30, test 2 (the controller's side): objects the API server would refuse, stored
// while the CRD had no validation (an older CRD, a cluster that skipped it). Each bad
// object Fails alone, naming its field; a valid Maintenance created after them Succeeds;
// `get` lists them all.
func TestBadObjectsFailAlone(t *testing.T) {
	e := oneNodeWorkload(t, "a", "web", 2, nil, 0)
	mc := mclient(t)
	withoutValidation(e)
	dur := func(s string) *mntv1.Duration { d := mntv1.Duration(s); return &d }
	bad := map[string]struct {
		spec mntv1.MaintenanceSpec
		want string
	}{
		e.NS + "-timeout":  {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0), Drain: mntv1.DrainSettings{Timeout: dur("abc")}}, "spec.drain.timeout"},
		e.NS + "-blocked":  {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0), Policy: mntv1.Policy{BlockedAfter: dur("1d")}}, "spec.policy.blockedAfter"},
		e.NS + "-nodename": {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: []string{""}}, "spec.nodes[0]"},
	}
	for name, b := range bad {
		create(e, mc, name, b.spec)
	}
	good := e.NS + "-good"
	create(e, mc, good, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0)})
	startController(e)
	for name, b := range bad {
		m, _ := waitFor(e, mc, name, "its end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
		if m.Status.Phase != mntv1.PhaseFailed || !strings.Contains(m.Status.Message, b.want) {
			t.Errorf("%s: phase %s (%s), want Failed naming %s", name, m.Status.Phase, m.Status.Message, b.want)
		}
	}
	m, _ := waitFor(e, mc, good, "its end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
	if m.Status.Phase != mntv1.PhaseSucceeded {
		t.Errorf("the valid Maintenance: phase %s (%s), want Succeeded", m.Status.Phase, m.Status.Message)
	}
	r := e.Run("get")
	if r.Code != 0 {
		t.Fatalf("get: exit %d", r.Code)
	}
	for name := range bad {
		if !strings.Contains(r.Stdout, name) {
			t.Errorf("get does not list %s", name)
		}
	}
	if !strings.Contains(r.Stdout, good) {
		t.Errorf("get does not list %s", good)
	}
}

// withoutValidation replaces the Maintenance CRD's schema with one that checks nothing but
// types, until the test ends (then the real CRD is installed again, after the test's
// objects are gone: cleanups run last registered first).
func withoutValidation(e *fixture.Env) {
	e.T.Helper()
	ac, err := apiextensionsclient.NewForConfig(shared.Config)
	if err != nil {
		e.T.Fatal(err)
	}
	want := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(crd.Maintenances, want); err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(func() {
		if r := e.RunCtx(context.Background(), nil, "install"); r.Code != 0 {
			e.T.Errorf("install (the CRD back): exit %d", r.Code)
		}
	})
	cur, err := ac.ApiextensionsV1().CustomResourceDefinitions().Get(e.Ctx, want.Name, metav1.GetOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	for i := range cur.Spec.Versions {
		if s := cur.Spec.Versions[i].Schema; s != nil && s.OpenAPIV3Schema != nil {
			strip(s.OpenAPIV3Schema)
		}
	}
	if _, err := ac.ApiextensionsV1().CustomResourceDefinitions().Update(e.Ctx, cur, metav1.UpdateOptions{}); err != nil {
		e.T.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the API server's handler takes the new schema
}

// strip removes every rule but the types from s and what it holds.
func strip(s *apiextensionsv1.JSONSchemaProps) {
	s.XValidations, s.Pattern, s.MinLength, s.MaxLength, s.MinItems, s.MaxItems, s.Enum = nil, "", nil, nil, nil, nil, nil
	for k, p := range s.Properties {
		strip(&p)
		s.Properties[k] = p
	}
	if s.Items != nil && s.Items.Schema != nil {
		strip(s.Items.Schema)
	}
}
