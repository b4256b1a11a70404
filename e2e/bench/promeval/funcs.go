package promeval

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// tokenize splits a query into identifiers, numbers, quoted strings, operators and
// punctuation; a range's [5m] is one token "[5m]".
func tokenize(q string) ([]string, error) {
	var toks []string
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case c == '"':
			j := i + 1
			for j < len(q) && q[j] != '"' {
				if q[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(q) {
				return nil, fmt.Errorf("string not closed")
			}
			toks = append(toks, q[i:j+1])
			i = j + 1
		case c == '[':
			j := strings.IndexByte(q[i:], ']')
			if j < 0 {
				return nil, fmt.Errorf("range not closed")
			}
			toks = append(toks, q[i:i+j+1])
			i += j + 1
		case isIdent(string(c)) || c >= '0' && c <= '9' || c == '.':
			j := i
			for j < len(q) && (isIdent(string(q[j])) || q[j] >= '0' && q[j] <= '9' || q[j] == '.') {
				j++
			}
			toks = append(toks, q[i:j])
			i = j
		case strings.ContainsRune("!=<>", rune(c)) && i+1 < len(q) && strings.ContainsRune("=~", rune(q[i+1])):
			toks = append(toks, q[i:i+2])
			i += 2
		case strings.ContainsRune("(){},*/<>=", rune(c)):
			toks = append(toks, string(c))
			i++
		default:
			return nil, fmt.Errorf("unexpected %q", c)
		}
	}
	return toks, nil
}

// parseRange reads "[5m]" (units s, m, h, d, w).
func parseRange(t string) (time.Duration, error) {
	if len(t) < 4 || t[0] != '[' {
		return 0, fmt.Errorf("want a range, got %q", t)
	}
	units := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	body := t[1 : len(t)-1]
	u, ok := units[body[len(body)-1]]
	n, err := strconv.Atoi(body[:len(body)-1])
	if !ok || err != nil {
		return 0, fmt.Errorf("bad range %q", t)
	}
	return time.Duration(n) * u, nil
}

// rangeFunc: rate, increase or max_over_time of name{...}[range].
func (p *parser) rangeFunc(fn string) (value, error) {
	if err := p.expect("("); err != nil {
		return value{}, err
	}
	name := p.next()
	if !isIdent(name) {
		return value{}, fmt.Errorf("%s: want a selector, got %q", fn, name)
	}
	ms, err := p.matchers()
	if err != nil {
		return value{}, err
	}
	window, err := parseRange(p.next())
	if err != nil {
		return value{}, err
	}
	if err := p.expect(")"); err != nil {
		return value{}, err
	}
	last := p.scrapes[len(p.scrapes)-1].At
	type points struct {
		s     Series
		ts    []time.Time
		vs    []float64
		order int
	}
	by := map[string]*points{}
	var first time.Time // of the window's scrapes
	for _, sc := range p.scrapes {
		if sc.At.Before(last.Add(-window)) {
			continue
		}
		if first.IsZero() {
			first = sc.At
		}
		for _, s := range pick(sc, name, ms) {
			k := key(s.Name, s.Labels)
			if by[k] == nil {
				by[k] = &points{s: s}
				if sc.At.After(first) && fn != "max_over_time" {
					// Absent from the window's first scrape (of the same process): it was 0
					// then, as a counter is created at its first increment.
					by[k].ts, by[k].vs = append(by[k].ts, first), append(by[k].vs, 0)
				}
			}
			by[k].ts, by[k].vs = append(by[k].ts, sc.At), append(by[k].vs, s.Value)
		}
	}
	p.span = max(p.span, last.Sub(first))
	out := value{vec: []Series{}}
	for _, pt := range by {
		s := Series{Labels: pt.s.Labels}
		n := len(pt.vs)
		if fn == "max_over_time" {
			s.Value = pt.vs[0]
			for _, v := range pt.vs {
				s.Value = math.Max(s.Value, v)
			}
			out.vec = append(out.vec, s)
			continue
		}
		if n < 2 {
			continue // as Prometheus: a rate needs two samples
		}
		inc := 0.0
		for i := 1; i < n; i++ {
			if d := pt.vs[i] - pt.vs[i-1]; d >= 0 {
				inc += d
			} else {
				inc += pt.vs[i] // a counter reset: it restarted from 0
			}
		}
		s.Value = inc
		if fn == "rate" {
			s.Value = inc / pt.ts[n-1].Sub(pt.ts[0]).Seconds()
		}
		out.vec = append(out.vec, s)
	}
	return out, nil
}

// aggregations are the aggregation operators known, each folding a group's values.
var aggregations = map[string]func(vs []float64) float64{
	"sum": func(vs []float64) float64 {
		t := 0.0
		for _, v := range vs {
			t += v
		}
		return t
	},
	"max": func(vs []float64) float64 {
		m := math.Inf(-1)
		for _, v := range vs {
			m = math.Max(m, v)
		}
		return m
	},
	"min": func(vs []float64) float64 {
		m := math.Inf(1)
		for _, v := range vs {
			m = math.Min(m, v)
		}
		return m
	},
	"count": func(vs []float64) float64 { return float64(len(vs)) },
}

// aggregate: op [by (labels)] (expr); an aggregation of nothing is empty.
func (p *parser) aggregate(op string) (value, error) {
	var by []string
	if p.peek() == "by" {
		p.next()
		if err := p.expect("("); err != nil {
			return value{}, err
		}
		for p.peek() != ")" && p.peek() != "" {
			if t := p.next(); t != "," {
				by = append(by, t)
			}
		}
		p.next()
	}
	if err := p.expect("("); err != nil {
		return value{}, err
	}
	in, err := p.expr()
	if err != nil {
		return in, err
	}
	if err := p.expect(")"); err != nil {
		return in, err
	}
	type group struct {
		labels map[string]string
		vs     []float64
	}
	groups := map[string]*group{}
	var order []string
	for _, s := range in.vec {
		labels := map[string]string{}
		for _, l := range by {
			if v, ok := s.Labels[l]; ok {
				labels[l] = v
			}
		}
		k := key("", labels)
		if groups[k] == nil {
			groups[k] = &group{labels: labels}
			order = append(order, k)
		}
		groups[k].vs = append(groups[k].vs, s.Value)
	}
	out := value{vec: []Series{}}
	for _, k := range order {
		out.vec = append(out.vec, Series{Labels: groups[k].labels, Value: aggregations[op](groups[k].vs)})
	}
	return out, nil
}

// quantile: histogram_quantile(q, buckets), interpolated linearly inside the bucket as
// Prometheus does (NaN for a histogram with no observation).
func (p *parser) quantile() (value, error) {
	if err := p.expect("("); err != nil {
		return value{}, err
	}
	q, err := strconv.ParseFloat(p.next(), 64)
	if err != nil {
		return value{}, fmt.Errorf("histogram_quantile: %w", err)
	}
	if err := p.expect(","); err != nil {
		return value{}, err
	}
	in, err := p.expr()
	if err != nil {
		return in, err
	}
	if err := p.expect(")"); err != nil {
		return in, err
	}
	type bucket struct{ le, n float64 }
	hists := map[string][]bucket{}
	labels := map[string]map[string]string{}
	for _, s := range in.vec {
		le, err := strconv.ParseFloat(s.Labels["le"], 64)
		if err != nil {
			continue
		}
		rest := map[string]string{}
		for k, v := range s.Labels {
			if k != "le" {
				rest[k] = v
			}
		}
		k := key("", rest)
		labels[k] = rest
		hists[k] = append(hists[k], bucket{le, s.Value})
	}
	out := value{vec: []Series{}}
	for k, bs := range hists {
		sort.Slice(bs, func(i, j int) bool { return bs[i].le < bs[j].le })
		out.vec = append(out.vec, Series{Labels: labels[k], Value: bucketQuantile(q, bs[len(bs)-1].n, func(i int) (float64, float64) {
			return bs[i].le, bs[i].n
		}, len(bs))})
	}
	return out, nil
}

// bucketQuantile is Prometheus's: the bucket where the rank q·total falls, interpolated
// between its lower and upper bound; the +Inf bucket answers the highest finite bound.
func bucketQuantile(q, total float64, bucket func(int) (le, n float64), n int) float64 {
	if total == 0 || n < 2 {
		return math.NaN()
	}
	rank := q * total
	lower, below := 0.0, 0.0
	for i := range n {
		le, cum := bucket(i)
		if cum >= rank {
			if math.IsInf(le, 1) {
				return lower
			}
			if i == 0 && le <= 0 {
				return le
			}
			return lower + (le-lower)*(rank-below)/(cum-below)
		}
		lower, below = le, cum
	}
	return lower
}
