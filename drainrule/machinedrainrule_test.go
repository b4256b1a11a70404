package drainrule

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// apiServer answers discovery (with or without Cluster API's group) and the
// MachineDrainRule list with listStatus and listBody; lists counts the list requests.
func apiServer(t *testing.T, served bool, listStatus int, listBody string, lists *atomic.Int32) *httptest.Server {
	t.Helper()
	groups := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	if served {
		gv := metav1.GroupVersionForDiscovery{GroupVersion: Group + "/v1beta2", Version: "v1beta2"}
		groups.Groups = []metav1.APIGroup{{Name: Group, Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}}
	}
	write := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if s, ok := v.(string); ok {
			_, _ = w.Write([]byte(s))
			return
		}
		_ = json.NewEncoder(w).Encode(v)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api":
			write(w, 200, metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}})
		case "/apis":
			write(w, 200, groups)
		case "/apis/" + Group + "/v1beta2":
			write(w, 200, metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: Group + "/v1beta2",
				APIResources: []metav1.APIResource{{Name: Resource, Namespaced: true, Kind: "MachineDrainRule", Verbs: []string{"list"}}}})
		case "/apis/" + Group + "/v1beta2/" + Resource:
			lists.Add(1)
			write(w, listStatus, listBody)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestLoadMachineDrainRules(t *testing.T) {
	forbidden := `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"machinedrainrules.cluster.x-k8s.io is forbidden: User \"u\" cannot list resource"}`
	list := `{"items":[{"metadata":{"name":"a"},"spec":{"drain":{"behavior":"Drain","order":-5},"pods":[{"selector":{"matchLabels":{"app":"x"}}}]}}]}`
	for name, tc := range map[string]struct {
		served  bool
		status  int
		body    string
		rules   int
		lists   int32
		warning string
		wantErr string
	}{
		"no Cluster API: nothing is listed":          {served: false, lists: 0},
		"served: one list":                           {served: true, status: 200, body: list, rules: 1, lists: 1},
		"not allowed to list: one warning, no error": {served: true, status: 403, body: forbidden, lists: 1, warning: "cannot list machinedrainrules.cluster.x-k8s.io"},
		"another failure is an error":                {served: true, status: 500, body: `{"kind":"Status","apiVersion":"v1","status":"Failure","code":500,"message":"boom"}`, lists: 1, wantErr: "list machinedrainrules.cluster.x-k8s.io"},
	} {
		t.Run(name, func(t *testing.T) {
			var lists atomic.Int32
			srv := apiServer(t, tc.served, tc.status, tc.body, &lists)
			d, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			rules, warning, err := LoadMachineDrainRules(context.Background(), d)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if len(rules) != tc.rules || lists.Load() != tc.lists {
				t.Errorf("%d rules in %d list(s), want %d in %d", len(rules), lists.Load(), tc.rules, tc.lists)
			}
			if (tc.warning == "") != (warning == "") || !strings.Contains(warning, tc.warning) || strings.Contains(warning, "\n") {
				t.Errorf("warning %q, want one line containing %q", warning, tc.warning)
			}
		})
	}
}
