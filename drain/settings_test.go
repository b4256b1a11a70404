package drain

import (
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-maintenance/kubectl-maintenance/drainrule"
)

// Every mistake Settings.Validate knows, each with its one message: the setting's name,
// the CEL rule's words, the value given.
func TestSettingsValidate(t *testing.T) {
	force := Policy{OnBlocked: OnBlockedForce, ForceAfter: time.Second}
	tests := map[string]struct {
		in   Settings
		want string // the whole message; "" when valid
	}{
		"the zero value is valid":                 {in: Settings{}},
		"kubectl drain's defaults are valid":      {in: Settings{GracePeriodSeconds: -1, ChunkSize: DefaultChunkSize, DryRun: DryRunNone, MaxParallelNodes: DefaultMaxParallelNodes}},
		"force with forceAfter and budgets":       {in: Settings{Policy: Policy{OnBlocked: OnBlockedForce, ForceAfter: time.Second, NeverForce: []string{"shop/db", "kube-system/coredns"}}}},
		"a dead-node wait needs no force":         {in: Settings{Policy: Policy{DeadNodeDeleteWait: time.Minute}}},
		"a grace period below -1":                 {in: Settings{GracePeriodSeconds: -2}, want: "gracePeriodSeconds must be -1 (each pod's own) or more, got -2"},
		"a negative timeout":                      {in: Settings{Timeout: -5 * time.Second}, want: "timeout must not be negative (0 means no limit), got -5s"},
		"a pod selector that is no selector":      {in: Settings{PodSelector: "a=b=c=,"}, want: `podSelector must be a label selector (` + selectorErr(t, "a=b=c=,") + `), got "a=b=c=,"`},
		"a negative skip-wait":                    {in: Settings{SkipWaitForDeleteTimeoutSeconds: -1}, want: "skipWaitForDeleteTimeoutSeconds must not be negative, got -1"},
		"a negative chunk size":                   {in: Settings{ChunkSize: -1}, want: "chunkSize must not be negative, got -1"},
		"an unknown dry-run mode":                 {in: Settings{DryRun: "later"}, want: `dryRun must be "none", "client" or "server", got "later"`},
		"negative parallelism":                    {in: Settings{MaxParallelNodes: -1}, want: "maxParallelNodes must not be negative (0 means the default), got -1"},
		"an unknown onBlocked":                    {in: Settings{Policy: Policy{OnBlocked: "retry"}}, want: `onBlocked must be wait, skip, fail or force, got "retry"`},
		"a negative blockedAfter":                 {in: Settings{Policy: Policy{BlockedAfter: -time.Second}}, want: "blockedAfter must not be negative, got -1s"},
		"a negative soak":                         {in: Settings{Policy: Policy{Soak: -time.Minute}}, want: "soak must not be negative, got -1m0s"},
		"a negative forceAfter":                   {in: Settings{Policy: Policy{OnBlocked: OnBlockedForce, ForceAfter: -time.Second}}, want: "forceAfter must not be negative, got -1s"},
		"force without forceAfter":                {in: Settings{Policy: Policy{OnBlocked: OnBlockedForce}}, want: "onBlocked force needs an explicit forceAfter (how long a pod stays blocked before it is deleted)"},
		"forceAfter without force":                {in: Settings{Policy: Policy{OnBlocked: OnBlockedSkip, ForceAfter: time.Minute}}, want: "forceAfter needs onBlocked force"},
		"neverForce without force":                {in: Settings{Policy: Policy{NeverForce: []string{"shop/db"}}}, want: "neverForce needs onBlocked force"},
		"a neverForce entry that is no budget":    {in: Settings{Policy: Policy{OnBlocked: force.OnBlocked, ForceAfter: force.ForceAfter, NeverForce: []string{"db"}}}, want: `neverForce must be NAMESPACE/NAME of a budget, got "db"`},
		"a drain rule that cannot be compiled":    {in: Settings{DrainOrder: []drainrule.Rule{{Behavior: "Later"}}}, want: "drainOrder has a bad rule: " + compileErr(t, []drainrule.Rule{{Behavior: "Later"}})},
		"two mistakes are two messages, in order": {in: Settings{GracePeriodSeconds: -3, ChunkSize: -1}, want: "gracePeriodSeconds must be -1 (each pod's own) or more, got -3; chunkSize must not be negative, got -1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.in.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			var u *UsageError
			if !errors.As(err, &u) || !IsUsage(err) || err.Error() != tc.want {
				t.Fatalf("Validate = %v, want the usage error %q", err, tc.want)
			}
			if len(u.Mistakes) == 0 || u.Mistakes[0].String() != u.Error()[:len(u.Mistakes[0].String())] {
				t.Errorf("Mistakes = %+v, want them to say the message", u.Mistakes)
			}
		})
	}
}

// Config.Validate is the settings' validation plus the wiring's.
func TestConfigValidateAddsTheWiring(t *testing.T) {
	if err := (Config{Steps: stubSteps{}}).Validate(); err == nil || err.Error() != "node steps need a rolling drain" || !IsUsage(err) {
		t.Errorf("Config.Validate = %v, want the usage error of node steps without a rolling drain", err)
	}
	err := (Config{Settings: Settings{GracePeriodSeconds: -2}}).Validate()
	if err == nil || err.Error() != (Settings{GracePeriodSeconds: -2}).Validate().Error() {
		t.Errorf("Config.Validate = %v, want the settings' message", err)
	}
}

// stubSteps are node steps that are never called.
type stubSteps struct{ NodeSteps }

func selectorErr(t *testing.T, s string) string {
	t.Helper()
	_, err := labels.Parse(s)
	if err == nil {
		t.Fatalf("%q parsed", s)
	}
	return err.Error()
}

func compileErr(t *testing.T, rules []drainrule.Rule) string {
	t.Helper()
	_, err := drainrule.Compile(rules)
	if err == nil {
		t.Fatal("the rule compiled")
	}
	return err.Error()
}
