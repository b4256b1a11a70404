package access

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// WhoAmI names the user the client authenticates as: the API server's answer to a
// SelfSubjectReview (authentication.k8s.io/v1) when it gives one, else fallback (see
// UserFromConfig). It never fails: a user nobody can name is fallback.
func WhoAmI(ctx context.Context, c kubernetes.Interface, fallback string) string {
	if c == nil {
		return fallback
	}
	r, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err == nil && r.Status.UserInfo.Username != "" {
		return r.Status.UserInfo.Username
	}
	return fallback
}
