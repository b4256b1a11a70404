package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
)

func TestForceFlagsValidation(t *testing.T) {
	tests := map[string]struct {
		onBlocked string
		flags     ForceFlags
		wantErr   string // "" when valid
	}{
		"force with --force-after":               {onBlocked: "force", flags: ForceFlags{ForceAfter: 5 * time.Second}},
		"force without --force-after is refused": {onBlocked: "force", wantErr: "--on-blocked=force needs an explicit --force-after DURATION"},
		"a negative --force-after":               {onBlocked: "force", flags: ForceFlags{ForceAfter: -time.Second}, wantErr: "invalid --force-after -1s: must be positive"},
		"--force-after without force":            {onBlocked: "skip", flags: ForceFlags{ForceAfter: time.Second}, wantErr: "--force-after needs --on-blocked=force"},
		"--never-force without force":            {onBlocked: "wait", flags: ForceFlags{NeverForce: []string{"shop/db"}}, wantErr: "--never-force needs --on-blocked=force"},
		"--never-force takes NAMESPACE/NAME":     {onBlocked: "force", flags: ForceFlags{ForceAfter: time.Second, NeverForce: []string{"shop/db", "db"}}, wantErr: `invalid --never-force "db": want NAMESPACE/NAME`},
		"--never-force with budgets":             {onBlocked: "force", flags: ForceFlags{ForceAfter: time.Second, NeverForce: []string{"shop/db"}}},
		"a negative --dead-node-delete-wait":     {onBlocked: "wait", flags: ForceFlags{DeadNodeDeleteWait: -time.Second}, wantErr: "invalid --dead-node-delete-wait -1s"},
		"an unknown --on-blocked names force":    {onBlocked: "delete", wantErr: `must be "wait", "skip", "fail" or "force"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := PolicyFlags{OnBlocked: tc.onBlocked, ForceFlags: tc.flags}
			err := p.validatePolicy()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("validatePolicy = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || ExitCode(err) != ExitUsage || strings.Contains(err.Error(), "\n") {
				t.Fatalf("validatePolicy = %v (exit %d), want one line with %q, exit 2", err, ExitCode(err), tc.wantErr)
			}
		})
	}
}

func TestForcePolicyFromFlags(t *testing.T) {
	tests := map[string]struct {
		flags    ForceFlags
		wantDead time.Duration
	}{
		"the flag's default is the engine's default":           {flags: ForceFlags{flags: true, DeadNodeDeleteWait: drain.DefaultDeadNodeDeleteWait}, wantDead: drain.DefaultDeadNodeDeleteWait},
		"the flag's 0 waits for ever":                          {flags: ForceFlags{flags: true}, wantDead: -1},
		"a command without the flags keeps the engine default": {flags: ForceFlags{}, wantDead: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var pol drain.Policy
			tc.flags.forcePolicy(&pol)
			if pol.DeadNodeDeleteWait != tc.wantDead {
				t.Errorf("DeadNodeDeleteWait = %s, want %s", pol.DeadNodeDeleteWait, tc.wantDead)
			}
		})
	}
}

func TestFinishedByForceExitCode(t *testing.T) {
	if got := ExitCode(&drain.ForcedError{Pods: []drain.ForcedPod{{Pod: "shop/db-0", PDB: "shop/db"}}}); got != ExitForced {
		t.Errorf("ExitCode(ForcedError) = %d, want %d", got, ExitForced)
	}
}
