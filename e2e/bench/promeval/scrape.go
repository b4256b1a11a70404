// Package promeval evaluates the PromQL example queries of the metrics reference
// (docs/reference/metrics.md) on scrapes of a metrics endpoint, without a Prometheus:
// the fleet bench reports each family's query with its value at the end of F5.
//
// It knows the forms those queries use: a selector with =, != and =~ matchers; rate,
// increase and max_over_time over a range; sum and sum by (...); histogram_quantile over
// buckets; and a binary operator (*, /, >, <, >=, <=, ==, !=) between an expression and a
// number or two expressions with the same labels (a ratio of sums). A comparison filters,
// as PromQL's does without bool.
//
// A range function reads the scrapes in its window, cut to the scrapes there are: rate
// and increase are the increase between the first and the last of them, counter resets
// handled and no extrapolation to the window's edges (Prometheus's figure over the span
// the scrapes cover). A series absent from the window's first scrape counts from 0 there:
// the scrapes are of one process, whose counters are created at their first increment
// (as Prometheus's created-timestamp zero ingestion does).
package promeval

import (
	"bufio"
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Series is one sample of a scrape: a metric name, its labels, its value.
type Series struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Scrape is every sample one read of a metrics endpoint returned, and when.
type Scrape struct {
	At     time.Time
	Series []Series
}

// Parse reads the Prometheus text format (version 0.0.4) in text, keeping the samples
// whose name starts with prefix ("" keeps every one).
func Parse(text []byte, at time.Time, prefix string) (Scrape, error) {
	s := Scrape{At: at}
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || !strings.HasPrefix(line, prefix) {
			continue
		}
		ser, err := parseLine(line)
		if err != nil {
			return s, fmt.Errorf("line %d: %w", n, err)
		}
		s.Series = append(s.Series, ser)
	}
	if err := sc.Err(); err != nil {
		return s, fmt.Errorf("read scrape: %w", err)
	}
	return s, nil
}

// parseLine reads `name{a="x",b="y"} value [timestamp]`.
func parseLine(line string) (Series, error) {
	ser := Series{Labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i <= 0 {
		return ser, fmt.Errorf("no value in %q", line)
	}
	ser.Name, line = line[:i], line[i:]
	if line[0] == '{' {
		rest, err := parseLabels(line[1:], ser.Labels)
		if err != nil {
			return ser, fmt.Errorf("%s: %w", ser.Name, err)
		}
		line = rest
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return ser, fmt.Errorf("%s: no value", ser.Name)
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return ser, fmt.Errorf("%s: value: %w", ser.Name, err)
	}
	ser.Value = v
	return ser, nil
}

// parseLabels reads `a="x",b="y"}` into into and returns what follows the brace.
func parseLabels(s string, into map[string]string) (string, error) {
	for {
		s = strings.TrimLeft(s, " ,")
		if s == "" {
			return "", fmt.Errorf("labels not closed")
		}
		if s[0] == '}' {
			return s[1:], nil
		}
		eq := strings.IndexByte(s, '=')
		if eq <= 0 || len(s) < eq+2 || s[eq+1] != '"' {
			return "", fmt.Errorf("bad label in %q", s)
		}
		name := strings.TrimSpace(s[:eq])
		var val strings.Builder
		j := eq + 2
		for ; j < len(s) && s[j] != '"'; j++ {
			if s[j] == '\\' && j+1 < len(s) {
				j++
				if s[j] == 'n' {
					val.WriteByte('\n')
					continue
				}
			}
			val.WriteByte(s[j])
		}
		if j == len(s) {
			return "", fmt.Errorf("label %s: value not closed", name)
		}
		into[name] = val.String()
		s = s[j+1:]
	}
}

// key is a series' identity: its name and labels, sorted.
func key(name string, labels map[string]string) string {
	names := make([]string, 0, len(labels))
	for n := range labels {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(name)
	for _, n := range names {
		fmt.Fprintf(&b, "\xff%s=%s", n, labels[n])
	}
	return b.String()
}

// String prints labels as PromQL does: {a="x", b="y"}, sorted; "{}" for none.
func labelString(labels map[string]string) string {
	names := make([]string, 0, len(labels))
	for n := range labels {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s=%q", n, labels[n])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
