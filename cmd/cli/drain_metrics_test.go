package cli

import (
	"strings"
	"testing"
)

// --metrics-bind-address is checked before the first API call (no cluster here).
func TestMetricsFlagIsValidatedBeforeAnyCall(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"no port":          {[]string{"drain", "n1", "--metrics-bind-address", "localhost"}, `invalid --metrics-bind-address "localhost"`},
		"an empty port":    {[]string{"drain", "n1", "--metrics-bind-address", "127.0.0.1:"}, `invalid --metrics-bind-address "127.0.0.1:"`},
		"with server-side": {[]string{"drain", "n1", "--server-side", "--metrics-bind-address", ":8080"}, "with --server-side the controller's metrics endpoint serves them"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, errOut, code := run(tc.args...)
			if code != ExitUsage || out != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing on stdout (stderr %q)", code, out, errOut)
			}
			if !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("stderr = %q, want one line containing %q", errOut, tc.want)
			}
		})
	}
}
