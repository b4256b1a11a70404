package metrics

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Registry is the registry the controller's manager serves on its metrics endpoint
// (controller-runtime's, with client-go's request metrics).
var Registry = ctrlmetrics.Registry

// shutdownTimeout bounds the end of a local metrics endpoint.
const shutdownTimeout = 5 * time.Second

// Serve serves Registry on addr's /metrics until stop is called; stop waits for the
// server to end. It is for a local run (drain --metrics-bind-address); the controller's
// manager serves the same registry on its own endpoint. The address is bound before
// Serve returns, so a bad or busy address is an error before the run starts.
func Serve(addr string) (bound string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("metrics endpoint %q: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(Registry, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// A listener that fails after the run started ends the endpoint, not the run.
		_ = srv.Serve(ln)
	}()
	return ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		_ = srv.Shutdown(ctx)
		wg.Wait()
	}, nil
}
