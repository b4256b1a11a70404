// Package access checks, before a command changes anything, that the user may make every
// API call the command will make. It asks the API server with SelfSubjectAccessReviews
// (the question `kubectl auth can-i` asks), so RBAC, webhook and every other authorizer
// answer as they will for the real call, and it turns the first denial into one line a
// person can act on: `cannot create pods/eviction in namespace "shop" (user "jane")`.
//
// The check lists of the commands are built here (Drain, Cordon, PoolMove). Creating
// Events is deliberately not required: the engine records node Events on a best-effort
// basis, so a user who may not create Events can still drain.
package access

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Check is one API call a command will make: a verb on a resource (and subresource) of an
// API group, in one namespace, in every namespace (AllNamespaces), or cluster-scoped (no
// namespace).
type Check struct {
	Verb        string
	Group       string
	Resource    string
	Subresource string
	Namespace   string
	// AllNamespaces marks a namespaced resource asked for across every namespace.
	AllNamespaces bool
}

// String renders the check as kubectl would name it: "create pods/eviction in namespace
// "shop"", "list poddisruptionbudgets.policy in all namespaces", "patch nodes".
func (c Check) String() string {
	s := c.Verb + " " + c.Resource
	if c.Group != "" {
		s += "." + c.Group
	}
	if c.Subresource != "" {
		s += "/" + c.Subresource
	}
	switch {
	case c.Namespace != "":
		s += fmt.Sprintf(" in namespace %q", c.Namespace)
	case c.AllNamespaces:
		s += " in all namespaces"
	}
	return s
}

// Denied is the error for a check the API server denies. It renders as one line.
type Denied struct {
	Check Check
	// User is who asked, as the API server authenticated them (empty: not known).
	User string
	// Reason is the authorizer's explanation, when it gives one.
	Reason string
}

func (d *Denied) Error() string {
	s := "cannot " + d.Check.String()
	if d.User != "" {
		s += fmt.Sprintf(" (user %q)", d.User)
	}
	return s
}

// Checker asks the API server whether the current user may make calls.
type Checker struct {
	// Client sends the SelfSubjectAccessReviews and the SelfSubjectReview.
	Client kubernetes.Interface
	// FallbackUser names the user when the API server will not say (no SelfSubjectReview);
	// see UserFromConfig.
	FallbackUser string
	// Parallel bounds how many reviews are in flight at once. Default 8.
	Parallel int
}

// Check asks about every check (duplicates once each) and returns the first denial, in
// the order given, as a *Denied; or an error if a review could not be made at all.
func (k *Checker) Check(ctx context.Context, checks []Check) error {
	checks = dedupe(checks)
	parallel := k.Parallel
	if parallel <= 0 {
		parallel = 8
	}
	results := make([]*authorizationv1.SubjectAccessReviewStatus, len(checks))
	errs := make([]error, len(checks))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i], errs[i] = k.review(ctx, c)
		}()
	}
	wg.Wait()
	for i, c := range checks {
		if errs[i] != nil {
			return errs[i]
		}
		if !results[i].Allowed {
			reason := results[i].Reason
			if reason == "" {
				reason = results[i].EvaluationError
			}
			return &Denied{Check: c, User: k.user(ctx), Reason: reason}
		}
	}
	return nil
}

// Missing asks about every check and returns those the API server denies, in the order
// given (none: nil), or an error if a review could not be made at all.
func (k *Checker) Missing(ctx context.Context, checks []Check) ([]Check, error) {
	var missing []Check
	for _, c := range dedupe(checks) {
		st, err := k.review(ctx, c)
		if err != nil {
			return nil, err
		}
		if !st.Allowed {
			missing = append(missing, c)
		}
	}
	return missing, nil
}

func (k *Checker) review(ctx context.Context, c Check) (*authorizationv1.SubjectAccessReviewStatus, error) {
	r := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: c.Namespace, Verb: c.Verb, Group: c.Group, Resource: c.Resource, Subresource: c.Subresource,
		},
	}}
	out, err := k.Client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, r, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("check whether you may %s: %w", c, err)
	}
	return &out.Status, nil
}

// user asks the API server who the caller is (SelfSubjectReview), falling back to
// FallbackUser when it cannot say.
func (k *Checker) user(ctx context.Context) string {
	r, err := k.Client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err == nil && r.Status.UserInfo.Username != "" {
		return r.Status.UserInfo.Username
	}
	return k.FallbackUser
}

func dedupe(checks []Check) []Check {
	seen := make(map[Check]bool, len(checks))
	out := checks[:0:0]
	for _, c := range checks {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

// UserFromConfig names the user a REST config authenticates as, as far as the config
// alone can tell: the impersonated user, the basic-auth user, or the common name of the
// client certificate. It returns "" for a bearer token or an exec plugin.
func UserFromConfig(cfg *rest.Config) string {
	switch {
	case cfg == nil:
		return ""
	case cfg.Impersonate.UserName != "":
		return cfg.Impersonate.UserName
	case cfg.Username != "":
		return cfg.Username
	}
	data := cfg.CertData
	if len(data) == 0 && cfg.CertFile != "" {
		data, _ = os.ReadFile(cfg.CertFile)
	}
	if block, _ := pem.Decode(data); block != nil {
		if cert, err := x509.ParseCertificate(block.Bytes); err == nil {
			return cert.Subject.CommonName
		}
	}
	return ""
}
