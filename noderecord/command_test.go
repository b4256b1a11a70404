package noderecord

import "testing"

func TestCommandLineMasksCredentials(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"a plain drain":         {[]string{"kubectl-maintenance", "drain", "n1", "--on-blocked=skip"}, "kubectl maintenance drain n1 --on-blocked=skip"},
		"a token as next arg":   {[]string{"kubectl-maintenance", "--token", "s3cr3t", "drain", "n1"}, "kubectl maintenance --token *** drain n1"},
		"a password with =":     {[]string{"kubectl-maintenance", "drain", "--password=s3cr3t", "n1"}, "kubectl maintenance drain --password=*** n1"},
		"no arguments recorded": {nil, "kubectl maintenance"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := CommandLine(tc.args); got != tc.want {
				t.Errorf("CommandLine = %q, want %q", got, tc.want)
			}
		})
	}
}
