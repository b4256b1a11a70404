package drain

import (
	"errors"
	"strings"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
)

// The engine's door asserts the settings in their own words, the checks that once stood
// apart included: the plan parses the pod selector no more (it said "invalid
// --pod-selector", a flag, from the engine), and the operations layer checks the dry run
// no more (it said "invalid dry run"). Each is Settings.Validate's mistake, said once.
func TestTheEngineDoorAssertsTheSettings(t *testing.T) {
	tests := map[string]struct {
		in   Settings
		want string // "" when the engine is built
	}{
		"a pod selector that is no selector": {in: Settings{PodSelector: "a=b=c=,"}, want: `podSelector must be a label selector (`},
		"an unknown dry run":                 {in: Settings{DryRun: "later"}, want: `dryRun must be "none", "client" or "server", got "later"`},
		"a grace period below -1":            {in: Settings{GracePeriodSeconds: -2}, want: "gracePeriodSeconds must be -1 (each pod's own) or more, got -2"},
		"the zero value":                     {in: Settings{}},
		"the defaults":                       {in: DefaultSettings()},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			eng, err := NewEngine(Config{Client: kubefake.New(), Events: make(chan event.Event), Settings: tc.in})
			if tc.want == "" {
				if err != nil || eng == nil {
					t.Fatalf("NewEngine = %v, want an engine", err)
				}
				return
			}
			var u *UsageError
			if !errors.As(err, &u) || len(u.Mistakes) != 1 || err.Error() != tc.in.Validate().Error() || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewEngine = %v, want the settings' one mistake %q (Validate: %v)", err, tc.want, tc.in.Validate())
			}
		})
	}
}

// The zeros the settings define as "the default" take DefaultSettings' values, and no
// other: a value given is kept.
func TestZeroValuesTakeDefaultSettings(t *testing.T) {
	d := DefaultSettings()
	got := Settings{}.withZeroDefaults()
	if got.ChunkSize != d.ChunkSize || got.MaxParallelNodes != d.MaxParallelNodes || got.DryRun != d.DryRun {
		t.Errorf("Settings{} = chunk %d, parallel %d, dry run %q; want DefaultSettings' %d, %d, %q",
			got.ChunkSize, got.MaxParallelNodes, got.DryRun, d.ChunkSize, d.MaxParallelNodes, d.DryRun)
	}
	if got.OnBlocked != OnBlockedWait || got.BlockedAfter != DefaultBlockedAfter {
		t.Errorf("policy %q after %s, want the policy's zero value: wait, %s", got.OnBlocked, got.BlockedAfter, DefaultBlockedAfter)
	}
	given := Settings{ChunkSize: 7, MaxParallelNodes: 2, DryRun: DryRunServer}.withZeroDefaults()
	if given.ChunkSize != 7 || given.MaxParallelNodes != 2 || given.DryRun != DryRunServer {
		t.Errorf("given values changed: %+v", given)
	}
}
