package access

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
)

// fakeAPI answers SelfSubjectAccessReviews from a deny list and SelfSubjectReviews with
// user (or an error when whoamiErr is set), and records every review it was asked.
type fakeAPI struct {
	deny      map[Check]bool
	reviewErr error
	user      string
	whoamiErr error

	mu    sync.Mutex
	asked []Check
}

func (f *fakeAPI) client() *fake.Clientset {
	cs := kubefake.New()
	cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		ra := r.Spec.ResourceAttributes
		c := Check{Verb: ra.Verb, Group: ra.Group, Resource: ra.Resource, Subresource: ra.Subresource, Namespace: ra.Namespace}
		f.mu.Lock()
		f.asked = append(f.asked, c)
		f.mu.Unlock()
		if f.reviewErr != nil {
			return true, nil, f.reviewErr
		}
		out := r.DeepCopy()
		out.Status.Allowed = !f.deny[c]
		if !out.Status.Allowed {
			out.Status.Reason = "no RBAC policy matched"
		}
		return true, out, nil
	})
	cs.PrependReactor("create", "selfsubjectreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
		if f.whoamiErr != nil {
			return true, nil, f.whoamiErr
		}
		r := &authenticationv1.SelfSubjectReview{}
		r.Status.UserInfo.Username = f.user
		return true, r, nil
	})
	return cs
}

func TestChecker(t *testing.T) {
	evictShop := Check{Verb: "create", Resource: "pods", Subresource: "eviction", Namespace: "shop"}
	patchNodes := Check{Verb: "patch", Resource: "nodes"}
	listPDBs := Check{Verb: "list", Group: "policy", Resource: "poddisruptionbudgets"}
	tests := []struct {
		name     string
		api      *fakeAPI
		fallback string
		checks   []Check
		want     string // the error's one line; "" for allowed
		wantAsks int
	}{
		{name: "everything allowed gives no error",
			api: &fakeAPI{user: "jane"}, checks: Drain([]string{"shop", "web"}), wantAsks: 10},
		{name: "a missing eviction permission names the verb, subresource, namespace and user",
			api:    &fakeAPI{deny: map[Check]bool{evictShop: true}, user: "jane"},
			checks: Drain([]string{"web", "shop"}), want: `cannot create pods/eviction in namespace "shop" (user "jane")`, wantAsks: 10},
		{name: "the first denial in the order given wins",
			api:    &fakeAPI{deny: map[Check]bool{evictShop: true, patchNodes: true}, user: "jane"},
			checks: Drain([]string{"shop"}), want: `cannot patch nodes (user "jane")`, wantAsks: 9},
		{name: "a namespaced resource across namespaces says so",
			api:    &fakeAPI{deny: map[Check]bool{listPDBs: true}, user: "jane"},
			checks: DrainReads(), want: `cannot list poddisruptionbudgets.policy in all namespaces (user "jane")`, wantAsks: 7},
		{name: "without SelfSubjectReview the user comes from the config",
			api:      &fakeAPI{deny: map[Check]bool{patchNodes: true}, whoamiErr: apierrors.NewForbidden(schema.GroupResource{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}, "", errors.New("no"))},
			fallback: "ops-bot", checks: Cordon(), want: `cannot patch nodes (user "ops-bot")`, wantAsks: 2},
		{name: "no user known at all leaves the user out",
			api:    &fakeAPI{deny: map[Check]bool{patchNodes: true}, whoamiErr: errors.New("unknown")},
			checks: Cordon(), want: `cannot patch nodes`, wantAsks: 2},
		{name: "a duplicate check is asked once",
			api:    &fakeAPI{user: "jane"},
			checks: append(Cordon(), Cordon()...), wantAsks: 2},
		{name: "a review the server refuses is an error naming the check",
			api:    &fakeAPI{reviewErr: errors.New("connection refused")},
			checks: Cordon(), want: "check whether you may get nodes: connection refused", wantAsks: 2},
		{name: "a client dry run asks only for reads",
			api:    &fakeAPI{deny: map[Check]bool{evictShop: true, patchNodes: true}, user: "jane"},
			checks: ReadOnly(PoolMove([]string{"shop"})), wantAsks: 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := &Checker{Client: tc.api.client(), FallbackUser: tc.fallback, Parallel: 3}
			err := k.Check(context.Background(), tc.checks)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Check: %v, want allowed", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("Check: %v, want %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			var d *Denied
			if errors.As(err, &d) && d.Reason != "no RBAC policy matched" {
				t.Errorf("Denied.Reason = %q, want the authorizer's reason", d.Reason)
			}
			if len(tc.api.asked) != tc.wantAsks {
				t.Errorf("asked %d reviews, want %d: %v", len(tc.api.asked), tc.wantAsks, tc.api.asked)
			}
		})
	}
}

func TestCheckLists(t *testing.T) {
	tests := []struct {
		name   string
		checks []Check
		want   []string
	}{
		{"cordon and uncordon read and patch nodes", Cordon(), []string{"get nodes", "patch nodes"}},
		{"a drain reads nodes, pods and budgets, patches nodes and evicts in each namespace, sorted", Drain([]string{"web", "shop"}), []string{
			"get nodes", "list nodes", "watch nodes",
			"list pods in all namespaces", "list poddisruptionbudgets.policy in all namespaces",
			"watch pods in all namespaces", "watch poddisruptionbudgets.policy in all namespaces",
			"patch nodes", `create pods/eviction in namespace "shop"`, `create pods/eviction in namespace "web"`}},
		{"a pool move also reads NodePools", PoolMove(nil), []string{
			"get nodepools.maintenance.kubectl-maintenance.io",
			"get nodes", "list nodes", "watch nodes",
			"list pods in all namespaces", "list poddisruptionbudgets.policy in all namespaces",
			"watch pods in all namespaces", "watch poddisruptionbudgets.policy in all namespaces",
			"patch nodes"}},
		{"events are never required", Drain([]string{"default"}), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range tc.checks {
				if c.Resource == "events" {
					t.Errorf("%s requires events: %v", tc.name, c)
				}
				got = append(got, c.String())
			}
			if tc.want != nil && strings.Join(got, "; ") != strings.Join(tc.want, "; ") {
				t.Errorf("checks:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestUserFromConfig(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "jane", Organization: []string{"ops"}},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	tests := []struct {
		name string
		cfg  *rest.Config
		want string
	}{
		{"impersonation wins", &rest.Config{Impersonate: rest.ImpersonationConfig{UserName: "bob"}, Username: "x"}, "bob"},
		{"basic auth", &rest.Config{Username: "alice"}, "alice"},
		{"client certificate common name", &rest.Config{TLSClientConfig: rest.TLSClientConfig{CertData: certPEM}}, "jane"},
		{"a bearer token cannot be named", &rest.Config{BearerToken: "t"}, ""},
		{"no config", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := UserFromConfig(tc.cfg); got != tc.want {
				t.Errorf("UserFromConfig = %q, want %q", got, tc.want)
			}
		})
	}
}
