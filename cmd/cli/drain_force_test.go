package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
)

// The force flags' mistakes, each one line naming the flags (exit 2): the settings'
// own (Settings.Validate through flagsError) and the flag's own (--dead-node-delete-wait).
func TestForceFlagsValidation(t *testing.T) {
	tests := map[string]struct {
		policy  drain.Policy
		dead    time.Duration // --dead-node-delete-wait
		wantErr string        // "" when valid
	}{
		"force with --force-after":               {policy: drain.Policy{OnBlocked: "force", ForceAfter: 5 * time.Second}},
		"force without --force-after is refused": {policy: drain.Policy{OnBlocked: "force"}, wantErr: "--on-blocked=force needs an explicit --force-after"},
		"a negative --force-after":               {policy: drain.Policy{OnBlocked: "force", ForceAfter: -time.Second}, wantErr: "invalid --force-after -1s: must not be negative"},
		"--force-after without force":            {policy: drain.Policy{OnBlocked: "skip", ForceAfter: time.Second}, wantErr: "--force-after needs --on-blocked=force"},
		"--never-force without force":            {policy: drain.Policy{OnBlocked: "wait", NeverForce: []string{"shop/db"}}, wantErr: "--never-force needs --on-blocked=force"},
		"--never-force takes NAMESPACE/NAME":     {policy: drain.Policy{OnBlocked: "force", ForceAfter: time.Second, NeverForce: []string{"shop/db", "db"}}, wantErr: `invalid --never-force "db": must be NAMESPACE/NAME`},
		"--never-force with budgets":             {policy: drain.Policy{OnBlocked: "force", ForceAfter: time.Second, NeverForce: []string{"shop/db"}}},
		"a negative --dead-node-delete-wait":     {policy: drain.Policy{OnBlocked: "wait"}, dead: -time.Second, wantErr: "invalid --dead-node-delete-wait -1s"},
		"an unknown --on-blocked names force":    {policy: drain.Policy{OnBlocked: "delete"}, wantErr: `must be wait, skip, fail or force`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			set := drain.Settings{Policy: tc.policy}
			p := PolicyFlags{ForceFlags: ForceFlags{flags: true, DeadNodeDeleteWait: tc.dead}}
			err := p.readPolicy(&set)
			if err == nil {
				err = flagsError(set.Validate())
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("readPolicy, Validate = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || ExitCode(err) != ExitUsage || strings.Contains(err.Error(), "\n") {
				t.Fatalf("readPolicy, Validate = %v (exit %d), want one line with %q, exit 2", err, ExitCode(err), tc.wantErr)
			}
		})
	}
}

// --dead-node-delete-wait into the setting: the flag's 0 is for ever, its default the
// engine's.
func TestForcePolicyFromFlags(t *testing.T) {
	tests := map[string]struct {
		flags    ForceFlags
		wantDead time.Duration
	}{
		"the flag's default is the engine's default":           {flags: ForceFlags{flags: true, DeadNodeDeleteWait: drain.DefaultDeadNodeDeleteWait}, wantDead: 0},
		"the flag's 0 waits for ever":                          {flags: ForceFlags{flags: true}, wantDead: -1},
		"another value is taken as it is":                      {flags: ForceFlags{flags: true, DeadNodeDeleteWait: time.Minute}, wantDead: time.Minute},
		"a command without the flags keeps the engine default": {flags: ForceFlags{}, wantDead: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var set drain.Settings
			if err := tc.flags.readForce(&set); err != nil {
				t.Fatal(err)
			}
			if set.DeadNodeDeleteWait != tc.wantDead {
				t.Errorf("DeadNodeDeleteWait = %s, want %s", set.DeadNodeDeleteWait, tc.wantDead)
			}
		})
	}
}

func TestFinishedByForceExitCode(t *testing.T) {
	if got := ExitCode(&drain.ForcedError{Pods: []drain.ForcedPod{{Pod: "shop/db-0", PDB: "shop/db"}}}); got != ExitForced {
		t.Errorf("ExitCode(ForcedError) = %d, want %d", got, ExitForced)
	}
}
