package drain

import (
	"net/http"
	"strings"

	"k8s.io/client-go/rest"
)

// DisableEvictionRetries makes cfg's clients hand every refused eviction back to the caller
// at once. client-go retries by itself, up to 10 times, any 429 or 5xx that carries a
// Retry-After header, so one eviction of a pod whose PDB status is stale can hang about
// 100 s inside a single call. This wraps the transport to drop the Retry-After header from
// refused eviction answers only; the wait the server asked for still reaches the engine in
// the Status body (details.retryAfterSeconds), which the engine honours.
func DisableEvictionRetries(cfg *rest.Config) {
	prev := cfg.WrapTransport
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if prev != nil {
			rt = prev(rt)
		}
		return evictionNoRetry{next: rt}
	}
}

type evictionNoRetry struct{ next http.RoundTripper }

func (t evictionNoRetry) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp == nil {
		return resp, err
	}
	if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/eviction") &&
		(resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500) {
		resp.Header.Del("Retry-After")
	}
	return resp, nil
}
