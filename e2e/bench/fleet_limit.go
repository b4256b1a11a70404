package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"sort"
	"time"
)

// windowLimit is T_limit: the time a perfect drain would take, given the budgets'
// allowances k_b at the start, the pods of each app on each group of nodes (one group of
// every node for F1; one group per node for F3, in the order taken), at most width groups
// in progress at once (a group starts as soon as one in progress is drained), the time
// T_c,b,j from budget b's j-th eviction to the budget allowing one more (as the same run
// met it: observer.tcOf), and the termination time. A budget's pod is evicted as soon as
// its group has started and one of the budget's k_b slots is free (a slot frees T_c,b,j
// after the j-th eviction that used it); a pod with no budget is evicted when its group
// starts; a group is drained when its last pod has terminated. For one group and one
// T_c,b per budget this is the closed form max(T_term, max_b (⌈M_b/k_b⌉ − 1)·T_c,b + T_term).
func windowLimit(allowed map[string]int32, groups []map[string]int, width int, tc func(app string, j int) time.Duration, term time.Duration) time.Duration {
	slots := map[string][]time.Duration{}          // app -> when each of its k_b slots is free
	evicted := map[string]int{}                    // app -> evictions so far
	places := make([]time.Duration, max(width, 1)) // when each place of the window is free
	var last time.Duration
	for _, g := range groups {
		sort.Slice(places, func(i, j int) bool { return places[i] < places[j] })
		start := places[0]
		end := start + term
		apps := make([]string, 0, len(g))
		for app := range g {
			apps = append(apps, app)
		}
		sort.Strings(apps)
		for _, app := range apps {
			k := int(allowed[app])
			if k <= 0 {
				continue // no budget (or none allowed at the start): goes at once
			}
			if slots[app] == nil {
				slots[app] = make([]time.Duration, k)
			}
			s := slots[app]
			for range g[app] {
				sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
				at := max(start, s[0])
				s[0] = at + tc(app, evicted[app])
				evicted[app]++
				end = max(end, at+term)
			}
		}
		places[0] = end
		last = max(last, end)
	}
	return last
}

// allowances is each budget's allowed disruptions (expectedPods − desiredHealthy) at its
// first status seen.
func (o *observer) allowances() map[string]int32 {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]int32{}
	for name, pts := range o.statuses {
		if len(pts) > 0 {
			out[name] = pts[0].expected - pts[0].desired
		}
	}
	return out
}

// cordonOrder is the order our drain took the nodes in (node.cordoned events of its
// NDJSON), falling back to name order.
func cordonOrder(ndjson []byte, nodes []string) []string {
	var order []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(ndjson))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct{ Type, Node string }
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "node.cordoned" && !seen[ev.Node] {
			seen[ev.Node] = true
			order = append(order, ev.Node)
		}
	}
	if len(order) != len(nodes) {
		order = append([]string(nil), nodes...)
		sort.Strings(order)
	}
	return order
}

// firstEviction is the time from began to the first pod.eviction_started event of our
// NDJSON (0 if none).
func firstEviction(ndjson []byte, began time.Time) float64 {
	sc := bufio.NewScanner(bytes.NewReader(ndjson))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct {
			Type string    `json:"type"`
			TS   time.Time `json:"ts"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "pod.eviction_started" {
			return ev.TS.Sub(began).Seconds()
		}
	}
	return 0
}
