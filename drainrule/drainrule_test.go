package drainrule

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

func TestParseFlag(t *testing.T) {
	for name, tc := range map[string]struct {
		in      string
		want    []string // Verdict.String() per rule, with the selector: "SEL => order N"
		wantErr string
	}{
		"orders and behaviors": {in: "app=fluentd:10,app=etcd-backup:wait-completed,app=x:Skip,app=y:-5",
			want: []string{"app=fluentd => order 10", "app=etcd-backup => wait-completed", "app=x => skip", "app=y => order -5"}},
		"a selector with its own commas": {in: "app=a,tier=b:10", want: []string{"app=a,tier=b => order 10"}},
		"set-based selector":             {in: "app in (a,b):3", want: []string{"app in (a,b) => order 3"}},
		"case variants of wait-completed": {in: "a=1:WaitCompleted,b=2:waitcompleted,c=3:Wait-Completed",
			want: []string{"a=1 => wait-completed", "b=2 => wait-completed", "c=3 => wait-completed"}},
		"empty selector matches all": {in: ":7", want: []string{" => order 7"}},
		"empty flag":                 {in: "", want: nil},
		"no value":                   {in: "app=a", wantErr: `"app=a": want SELECTOR:ORDER`},
		"bad value":                  {in: "app=a:first", wantErr: `want an order (an integer) or skip, wait-completed, not "first"`},
		"order out of range":         {in: "app=a:3000000000", wantErr: "out of range"},
		"bad selector":               {in: "app==(:1", wantErr: "selector"},
	} {
		t.Run(name, func(t *testing.T) {
			rules, err := ParseFlag(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rules {
				got = append(got, describe(t, r))
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// describe says a rule as "SELECTOR => verdict".
func describe(t *testing.T, r Rule) string {
	t.Helper()
	c, err := compile(r)
	if err != nil {
		t.Fatal(err)
	}
	return c.pods[0].Selector.String() + " => " + Verdict{Behavior: c.behavior, Order: c.order}.String()
}

func TestParseFile(t *testing.T) {
	for name, tc := range map[string]struct {
		in      string
		want    []string
		wantErr string
	}{
		"the spec's shape": {in: `
- selector: {matchLabels: {app: fluentd}}
  order: 10
- name: backups
  selector: {matchLabels: {app: etcd-backup}}
  namespaceSelector: {matchLabels: {team: storage}}
  behavior: WaitCompleted
- behavior: Skip
  selector: {matchExpressions: [{key: app, operator: In, values: [x]}]}
`, want: []string{"app=fluentd => order 10", "app=etcd-backup => wait-completed", "app in (x) => skip"}},
		"unknown field":            {in: "- selektor: {}\n", wantErr: "unknown field"},
		"unknown behavior":         {in: "- behavior: Later\n", wantErr: `unknown behavior "Later"`},
		"order with a behavior":    {in: "- behavior: Skip\n  order: 3\n", wantErr: "an order applies to behavior Drain only"},
		"not a list":               {in: "selector: {}\n", wantErr: "want a list of rules"},
		"bad selector in the file": {in: "- selector: {matchExpressions: [{key: app, operator: Near}]}\n", wantErr: "selector"},
	} {
		t.Run(name, func(t *testing.T) {
			rules, err := ParseFile([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rules {
				got = append(got, describe(t, r))
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func pod(ns string, lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p", Labels: lbls}}
}

func mdr(name string, b Behavior, order int32, sel, nsSel string) MachineDrainRule {
	m := MachineDrainRule{Name: name, Behavior: b, Order: order}
	if sel != "" || nsSel != "" {
		s, _ := labels.Parse(sel)
		n, _ := labels.Parse(nsSel)
		m.Pods = []PodSelector{{Selector: s, NamespaceSelector: n}}
	}
	return m
}

func TestMatch(t *testing.T) {
	own := []Rule{{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "fluentd"}}, Order: ptr.To[int32](10)}}
	machine := []MachineDrainRule{
		mdr("b-logs", Drain, 20, "app=fluentd", ""),
		mdr("c-all-storage", Drain, -5, "", "team=storage"),
		mdr("a-backup", WaitCompleted, 0, "app=backup", ""),
		mdr("d-catch-all", Drain, 3, "", ""),
	}
	nss := []corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "store", Labels: map[string]string{"team": "storage"}}}}
	set, err := Compile(own)
	if err != nil {
		t.Fatal(err)
	}
	set = set.WithMachineDrainRules(machine).WithNamespaces(nss)
	for name, tc := range map[string]struct {
		set  *Set
		pod  *corev1.Pod
		want string
	}{
		"no rules: order 0": {set: nil, pod: pod("x", nil), want: "order 0"},
		"the run's own rule before the MachineDrainRules": {set: set, pod: pod("x", map[string]string{"app": "fluentd"}), want: "order 10 (drain order rule)"},
		"rules sorted by name, first match wins":          {set: set, pod: pod("store", map[string]string{"app": "backup"}), want: "wait-completed (MachineDrainRule a-backup)"},
		"namespace selector matches the namespace labels": {set: set, pod: pod("store", map[string]string{"app": "db"}), want: "order -5 (MachineDrainRule c-all-storage)"},
		"namespace selector not matching":                 {set: set, pod: pod("x", map[string]string{"app": "db"}), want: "order 3 (MachineDrainRule d-catch-all)"},
		"the label wins over the rules":                   {set: set, pod: pod("store", map[string]string{"app": "backup", LabelDrain: "skip"}), want: "skip (label cluster.x-k8s.io/drain=skip)"},
		"label Skip as skip":                              {set: nil, pod: pod("x", map[string]string{LabelDrain: "Skip"}), want: "skip (label cluster.x-k8s.io/drain=Skip)"},
		"label WaitCompleted as wait-completed":           {set: nil, pod: pod("x", map[string]string{LabelDrain: "WaitCompleted"}), want: "wait-completed (label cluster.x-k8s.io/drain=WaitCompleted)"},
		"label waitcompleted":                             {set: nil, pod: pod("x", map[string]string{LabelDrain: "waitcompleted"}), want: "wait-completed (label cluster.x-k8s.io/drain=waitcompleted)"},
		"an unknown label value says nothing":             {set: set, pod: pod("x", map[string]string{LabelDrain: "later", "app": "fluentd"}), want: "order 10 (drain order rule)"},
		"unknown namespace: its name label only":          {set: set.WithNamespaces(nil), pod: pod("store", map[string]string{"app": "db"}), want: "order 3 (MachineDrainRule d-catch-all)"},
	} {
		t.Run(name, func(t *testing.T) {
			v := tc.set.Match(tc.pod)
			got := v.String()
			if v.Source != "" {
				got += " (" + v.Source + ")"
			}
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDecodeMachineDrainRules(t *testing.T) {
	raw := `{"items":[
{"metadata":{"name":"late"},"spec":{"drain":{"behavior":"Drain","order":10},"machines":[{"selector":{}}],
 "pods":[{"selector":{"matchLabels":{"app":"etcd"}},"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"kube-system"}}}]}},
{"metadata":{"name":"wait"},"spec":{"drain":{"behavior":"WaitCompleted"}}}]}`
	rules, _, err := DecodeMachineDrainRules([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	set := (&Set{}).WithMachineDrainRules(rules)
	for name, tc := range map[string]struct {
		pod  *corev1.Pod
		want string
	}{
		"pod and namespace selector match":    {pod: pod("kube-system", map[string]string{"app": "etcd"}), want: "order 10"},
		"a rule without pods matches all":     {pod: pod("default", map[string]string{"app": "etcd"}), want: "wait-completed"},
		"spec.machines is not read (matches)": {pod: pod("kube-system", map[string]string{"app": "etcd"}), want: "order 10"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := set.Match(tc.pod).String(); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	if _, _, err := DecodeMachineDrainRules([]byte(`{"items":[{"metadata":{"name":"x"},"spec":{"drain":{"behavior":"Later"}}}]}`)); err == nil || !strings.Contains(err.Error(), `MachineDrainRule x: unknown spec.drain.behavior "Later"`) {
		t.Fatalf("unknown behavior: error %v", err)
	}
}
