package drainrule

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// ParseFlag reads --drain-order: comma-separated SELECTOR:VALUE entries, where SELECTOR
// is a pod label selector (its own commas allowed: "app=a,tier=b:10" is one entry, since
// neither label keys nor values hold a colon) and VALUE an order (an int32), or skip,
// wait-completed (waitcompleted), case-insensitive. An empty selector matches every pod.
func ParseFlag(s string) ([]Rule, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []Rule
	var sel []string
	for _, piece := range strings.Split(s, ",") {
		before, value, found := strings.Cut(piece, ":")
		sel = append(sel, before)
		if !found {
			continue
		}
		selStr := strings.TrimSpace(strings.Join(sel, ","))
		sel = nil
		r, err := flagRule(selStr, strings.TrimSpace(value))
		if err != nil {
			return nil, fmt.Errorf("%q: %w", selStr+":"+value, err)
		}
		out = append(out, r)
	}
	if len(sel) > 0 {
		return nil, fmt.Errorf("%q: want SELECTOR:ORDER or SELECTOR:skip|wait-completed", strings.Join(sel, ","))
	}
	if _, err := Compile(out); err != nil {
		return nil, err
	}
	return out, nil
}

func flagRule(sel, value string) (Rule, error) {
	r := Rule{Name: sel}
	if sel != "" {
		ls, err := metav1.ParseToLabelSelector(sel)
		if err != nil {
			return r, fmt.Errorf("selector: %w", err)
		}
		r.Selector = ls
	}
	if b, ok := LabelBehavior(value); ok {
		r.Behavior = b
		return r, nil
	}
	if strings.EqualFold(value, "drain") {
		r.Behavior = Drain
		return r, nil
	}
	n, err := strconv.ParseInt(value, 10, 32)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return r, fmt.Errorf("order %s out of range (%d to %d)", value, math.MinInt32, math.MaxInt32)
		}
		return r, fmt.Errorf("want an order (an integer) or skip, wait-completed, not %q", value)
	}
	o := int32(n)
	r.Order = &o
	return r, nil
}

// ParseFile reads --drain-order-file: a YAML (or JSON) list of rules in the shape of a
// Maintenance's spec.drain.order. Unknown fields are refused.
func ParseFile(data []byte) ([]Rule, error) {
	var out []Rule
	if err := yaml.UnmarshalStrict(data, &out); err != nil {
		return nil, fmt.Errorf("want a list of rules (selector, namespaceSelector, order or behavior): %w", err)
	}
	if _, err := Compile(out); err != nil {
		return nil, err
	}
	return out, nil
}
