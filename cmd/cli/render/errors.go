package render

import (
	"errors"
	"fmt"
	"net"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ErrorLine is err as the one line a person reads after "error: ": low-level errors
// (the API server unreachable, credentials rejected, RBAC) name the problem and what to
// check, and a multi-line message is folded into one line.
func ErrorLine(err error) string {
	return oneLine(describe(err))
}

// describe turns low-level errors into messages that name the problem.
func describe(err error) string {
	var opErr *net.OpError
	switch {
	case errors.As(err, &opErr) && opErr.Op == "dial":
		at, hint := "", "check --kubeconfig, --context and --server"
		if opErr.Addr != nil {
			at = " at " + opErr.Addr.String()
			if host, port, _ := net.SplitHostPort(opErr.Addr.String()); port == "8080" && (host == "127.0.0.1" || host == "::1") {
				// client-go's default when no kubeconfig was found, as kubectl's
				hint = "no kubeconfig was found? set KUBECONFIG or --kubeconfig, or check --context and --server"
			}
		}
		return fmt.Sprintf("cannot reach the API server%s (%v): %s", at, opErr.Err, hint)
	case apierrors.IsUnauthorized(err):
		return fmt.Sprintf("the API server rejected the credentials: %v", err)
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "ValidatingAdmissionPolicy"):
		return fmt.Sprintf("not allowed (admission policy): %v", err)
	case apierrors.IsForbidden(err):
		return fmt.Sprintf("not allowed (RBAC): %v", err)
	}
	return err.Error()
}

// oneLine folds a multi-line message into one line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}
