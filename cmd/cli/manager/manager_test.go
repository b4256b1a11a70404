package manager

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// A controller started where no admission policy checks Maintenances' requesters says so
// once (a user who may only create Maintenances would act with its rights); with the
// binding, or when it may not read bindings, it says nothing.
func TestTheControllerWarnsWithoutTheRequesterPolicy(t *testing.T) {
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: RequesterPolicy}}
	tests := []struct {
		name      string
		objs      []runtime.Object
		forbidden bool
		warned    bool
	}{
		{"no binding", nil, false, true},
		{"the binding", []runtime.Object{binding}, false, false},
		{"may not read bindings", nil, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset(tc.objs...)
			if tc.forbidden {
				cs.PrependReactor("get", "validatingadmissionpolicybindings", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"}, RequesterPolicy, nil)
				})
			}
			var lines []string
			checkAdmission(context.Background(), cs, func(l string) { lines = append(lines, l) })
			if got := len(lines) == 1 && strings.Contains(lines[0], RequesterPolicy); got != tc.warned || len(lines) > 1 {
				t.Errorf("warnings %q; want one naming %s: %v", lines, RequesterPolicy, tc.warned)
			}
		})
	}
}
