package maintenance

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-maintenance/kubectl-maintenance/config/crd"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/drainrule"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// notInTheSpec are the settings a Maintenance does not carry, and why. Every other field
// of drain.Settings must go through the spec and back.
var notInTheSpec = map[string]string{
	"DryRun":                  "--server-side refuses --dry-run: a Maintenance always runs",
	"IgnoreMachineDrainRules": "the controller reads Cluster API's MachineDrainRules whenever the cluster serves them",
}

// everySetting sets every field of drain.Settings to a value that is not its zero value
// nor its default; the test fails when a field is added to drain.Settings and not here.
var everySetting = map[string]any{
	"Force": true, "IgnoreDaemonSets": true, "DeleteEmptyDirData": true, "GracePeriodSeconds": 30,
	"Timeout": 90 * time.Minute, "PodSelector": "app=web", "SkipWaitForDeleteTimeoutSeconds": 20,
	"ChunkSize": int64(50), "MaxParallelNodes": 3, "IgnoreDoNotDisrupt": true, "ClearHolds": true,
	"OnBlocked": drain.OnBlockedForce, "BlockedAfter": 2 * time.Minute, "NotAfter": time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC),
	"Soak": 30 * time.Second, "ForceAfter": 10 * time.Minute, "NeverForce": []string{"shop/db"},
	"DeadNodeDeleteWait": time.Minute, "WaitForVolumeDetach": true, "Settle": 10 * time.Second,
	"DrainOrder": []drainrule.Rule{{Name: "logs", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "fluentd"}}, Order: ptr.To(int32(10))},
		{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "backup"}}, Behavior: drainrule.WaitCompleted}},
}

// fill sets every field of s (the embedded Policy's too) from everySetting.
func fill(t *testing.T, s reflect.Value) {
	t.Helper()
	for i := range s.NumField() {
		f, v := s.Type().Field(i), s.Field(i)
		if f.Anonymous {
			fill(t, v)
			continue
		}
		if _, ok := notInTheSpec[f.Name]; ok {
			continue
		}
		val, ok := everySetting[f.Name]
		if !ok {
			t.Fatalf("drain.Settings.%s has no value in everySetting: convert it in SettingsFromSpec and SpecFromSettings (or say in notInTheSpec why the spec does not carry it)", f.Name)
		}
		v.Set(reflect.ValueOf(val).Convert(f.Type))
	}
}

// Every setting goes into a Maintenance's spec and comes back the same, through the
// JSON the API server stores; so do the values with a meaning of their own.
func TestSettingsSpecRoundTrip(t *testing.T) {
	var all drain.Settings
	fill(t, reflect.ValueOf(&all).Elem())
	tests := map[string]drain.Settings{
		"every setting":                     all,
		"kubectl drain's defaults":          {GracePeriodSeconds: -1, ChunkSize: drain.DefaultChunkSize},
		"a dead-node wait for ever":         {GracePeriodSeconds: -1, ChunkSize: drain.DefaultChunkSize, Policy: drain.Policy{DeadNodeDeleteWait: -1}},
		"a chunk size of 0 stays 0":         {GracePeriodSeconds: -1},
		"a grace period of 0 kills at once": {ChunkSize: drain.DefaultChunkSize},
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			var spec v1alpha1.MaintenanceSpec
			SpecFromSettings(in, &spec)
			data, err := json.Marshal(spec)
			if err != nil {
				t.Fatal(err)
			}
			var stored v1alpha1.MaintenanceSpec
			if err := json.Unmarshal(data, &stored); err != nil {
				t.Fatal(err)
			}
			out, err := SettingsFromSpec(stored)
			if err != nil {
				t.Fatalf("SettingsFromSpec: %v", err)
			}
			out.NotAfter = out.NotAfter.UTC() // metav1.Time decodes in the local zone: the same instant
			if !reflect.DeepEqual(out, in) {
				t.Errorf("round trip\n got %+v\nwant %+v\n(spec %s)", out, in, data)
			}
		})
	}
}

// An empty spec is kubectl drain's defaults (unset durations, the engine's defaults),
// with the volume wait and the default settle (when is a node drained).
func TestSettingsFromAnEmptySpec(t *testing.T) {
	got, err := SettingsFromSpec(v1alpha1.MaintenanceSpec{})
	want := drain.Settings{GracePeriodSeconds: -1, ChunkSize: drain.DefaultChunkSize, WaitForVolumeDetach: true, Settle: drain.DefaultSettle}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("SettingsFromSpec(empty) = %+v, %v; want %+v", got, err, want)
	}
}

// The API server's CEL rules and Settings.Validate say each mistake in the same words:
// the CEL message is the mistake's setting and rule.
func TestCELSaysTheSettingsWords(t *testing.T) {
	messages := celMessages(t)
	force := drain.Policy{OnBlocked: drain.OnBlockedForce}
	bad := map[string]drain.Settings{
		"gracePeriodSeconds":              {GracePeriodSeconds: -2},
		"timeout":                         {Timeout: -time.Second},
		"skipWaitForDeleteTimeoutSeconds": {SkipWaitForDeleteTimeoutSeconds: -1},
		"chunkSize":                       {ChunkSize: -1},
		"maxParallelNodes":                {MaxParallelNodes: -1},
		"onBlocked":                       {Policy: drain.Policy{OnBlocked: "retry"}},
		"blockedAfter":                    {Policy: drain.Policy{BlockedAfter: -time.Second}},
		"soak":                            {Policy: drain.Policy{Soak: -time.Second}},
		"forceAfter":                      {Policy: drain.Policy{OnBlocked: drain.OnBlockedForce, ForceAfter: -time.Second}},
		"force without forceAfter":        {Policy: force},
		"forceAfter without force":        {Policy: drain.Policy{ForceAfter: time.Second}},
		"neverForce without force":        {Policy: drain.Policy{NeverForce: []string{"shop/db"}}},
	}
	for name, s := range bad {
		t.Run(name, func(t *testing.T) {
			var u *drain.UsageError
			if err := s.Validate(); !asUsage(err, &u) || len(u.Mistakes) != 1 {
				t.Fatalf("Validate = %v, want one mistake", err)
			}
			m := u.Mistakes[0]
			if want := m.Setting + " " + m.Rule; !messages[want] {
				t.Errorf("no CEL rule of the Maintenance CRD says %q", want)
			}
		})
	}
}

func asUsage(err error, u **drain.UsageError) bool {
	v, ok := err.(*drain.UsageError)
	*u = v
	return ok
}

// celMessages are the messages of every x-kubernetes-validations rule of the CRD.
func celMessages(t *testing.T) map[string]bool {
	t.Helper()
	var doc any
	if err := yaml.Unmarshal(crd.Maintenances, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	var walk func(any)
	walk = func(n any) {
		switch n := n.(type) {
		case map[string]any:
			if rules, ok := n["x-kubernetes-validations"].([]any); ok {
				for _, r := range rules {
					if m, ok := r.(map[string]any)["message"].(string); ok {
						out[m] = true
					}
				}
			}
			for _, v := range n {
				walk(v)
			}
		case []any:
			for _, v := range n {
				walk(v)
			}
		}
	}
	walk(doc)
	if len(out) == 0 {
		t.Fatal("the CRD has no CEL messages")
	}
	return out
}

// The defaults live in drain.DefaultSettings only: SettingsFromSpec starts from them, so
// a spec is DefaultSettings with what the spec says written over it. The spec carries
// maxParallelNodes (its 0 is the default: 5, or a pool's maxUnavailable, decided by
// Request) and no dry run (a Maintenance always runs: the zero value).
func TestSettingsFromSpecStartsFromDefaultSettings(t *testing.T) {
	fromDefaults := func(change func(*drain.Settings)) drain.Settings {
		s := drain.DefaultSettings()
		s.DryRun, s.MaxParallelNodes = "", 0 // the spec's fields of the empty spec
		change(&s)
		return s
	}
	tests := map[string]struct {
		spec v1alpha1.MaintenanceSpec
		want drain.Settings
	}{
		"an empty spec": {want: fromDefaults(func(*drain.Settings) {})},
		"a timeout alone": {spec: v1alpha1.MaintenanceSpec{Drain: v1alpha1.DrainSettings{Timeout: v1alpha1.DurationOf(time.Hour)}},
			want: fromDefaults(func(s *drain.Settings) { s.Timeout = time.Hour })},
		"no volume wait": {spec: v1alpha1.MaintenanceSpec{Drain: v1alpha1.DrainSettings{WaitForVolumeDetach: ptr.To(false)}},
			want: fromDefaults(func(s *drain.Settings) { s.WaitForVolumeDetach = false })},
		"a settle of 0": {spec: v1alpha1.MaintenanceSpec{Drain: v1alpha1.DrainSettings{Settle: v1alpha1.DurationOf(0)}},
			want: fromDefaults(func(s *drain.Settings) { s.Settle = 0 })},
		"parallelism and a grace period": {spec: v1alpha1.MaintenanceSpec{Drain: v1alpha1.DrainSettings{GracePeriodSeconds: ptr.To(int32(0))}, Policy: v1alpha1.Policy{MaxParallelNodes: 3}},
			want: fromDefaults(func(s *drain.Settings) { s.GracePeriodSeconds, s.MaxParallelNodes = 0, 3 })},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := SettingsFromSpec(tc.spec)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("SettingsFromSpec = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
	// A drain of named nodes takes DefaultSettings' parallelism for the spec's 0.
	r, err := Request(&v1alpha1.Maintenance{Spec: v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionDrain, Nodes: []string{"n1"}}})
	if err != nil || r.Drain.MaxParallelNodes != drain.DefaultSettings().MaxParallelNodes {
		t.Errorf("Request = max parallel %d, %v; want DefaultSettings' %d", r.Drain.MaxParallelNodes, err, drain.DefaultSettings().MaxParallelNodes)
	}
}
