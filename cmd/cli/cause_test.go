package cli

import (
	"strings"
	"testing"
)

func TestWaitIntervalIsValidated(t *testing.T) {
	for _, args := range [][]string{{"drain", "n1", "--wait-interval", "10ms"}, {"drain", "n1", "--wait-interval", "-1s"}} {
		out, errOut, code := run(args...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, "invalid --wait-interval") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 naming --wait-interval", args, code, out, errOut)
		}
	}
}
