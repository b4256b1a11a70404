package printflags

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestValidate(t *testing.T) {
	tests := map[string]struct {
		table   bool
		format  string
		wantBad bool
	}{
		"the command's own table":         {table: true, format: ""},
		"wide where there is a table":     {table: true, format: "wide"},
		"wide where there is no table":    {table: false, format: "wide", wantBad: true},
		"json":                            {format: "json"},
		"name":                            {format: "name"},
		"custom columns":                  {table: true, format: "custom-columns=NAME:.metadata.name"},
		"a format nobody prints is a bad": {format: "toml", wantBad: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := New(tc.table)
			f.Format = tc.format
			err := f.Validate()
			var fe *FormatError
			if bad := errors.As(err, &fe); bad != tc.wantBad || (err != nil && !bad) {
				t.Errorf("Validate = %v, want a *FormatError: %v", err, tc.wantBad)
			}
		})
	}
}

func TestAsList(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	tests := map[string]struct {
		items    []runtime.Object
		single   bool
		wantList bool
	}{
		"one object named on the command line is printed alone": {items: []runtime.Object{node}, single: true},
		"one object listed is a List":                           {items: []runtime.Object{node}, wantList: true},
		"several objects are a List":                            {items: []runtime.Object{node, node}, single: true, wantList: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, isList := AsList(tc.items, tc.single).(*metav1.List)
			if isList != tc.wantList {
				t.Errorf("a List: %v, want %v", isList, tc.wantList)
			}
		})
	}
}
