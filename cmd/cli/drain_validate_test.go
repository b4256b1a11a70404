package cli

import (
	"strings"
	"testing"
)

// Every drain, cordon and uncordon flag is checked before the first API call: these run
// with no cluster at all, so an answer other than a usage error would mean a call was
// tried first.
func TestDrainFlagsAreValidatedBeforeAnyWrite(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"a negative timeout":             {[]string{"drain", "n1", "--timeout", "-5s"}, "invalid --timeout -5s"},
		"a grace period below -1":        {[]string{"drain", "n1", "--grace-period", "-2"}, "invalid --grace-period -2"},
		"a negative skip-wait":           {[]string{"drain", "n1", "--skip-wait-for-delete-timeout", "-1"}, "invalid --skip-wait-for-delete-timeout -1"},
		"a bad pod selector":             {[]string{"drain", "n1", "--pod-selector", "a=b=c=,"}, "invalid --pod-selector"},
		"another resource type":          {[]string{"cordon", "bad-0/x"}, `"bad-0/x": expected resource of type node, got "bad-0"`},
		"a pod instead of a node":        {[]string{"drain", "pod/web-1"}, `expected resource of type node, got "pod"`},
		"two slashes":                    {[]string{"drain", "node/a/b"}, "may not have more than one slash"},
		"an upper-case node name":        {[]string{"uncordon", "Bad_Name"}, `invalid node name "Bad_Name"`},
		"a bad pod selector on plan":     {[]string{"plan", "n1", "--pod-selector", "a=b=c=,"}, "invalid --pod-selector"},
		"a negative max-parallel-nodes":  {[]string{"drain", "n1", "--max-parallel-nodes", "-1"}, "--max-parallel-nodes must be at least 1, got -1"},
		"a bad node selector on cordon":  {[]string{"cordon", "-l", "a=b=c=,"}, "invalid --selector"},
		"a bad uncordon dry-run":         {[]string{"uncordon", "n1", "--dry-run=later"}, `invalid --dry-run "later"`},
		"a bad node selector on a drain": {[]string{"drain", "-l", "a=b=c=,"}, "invalid --selector"},
		"a bad node selector on status":  {[]string{"status", "-l", "a=b=c=,"}, "invalid --selector"},
		"a bad node selector on nodes":   {[]string{"nodes", "-l", "a=b=c=,"}, "invalid --selector"},
		"a bad output on status":         {[]string{"status", "-o", "xml"}, "xml"},
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
