package promeval

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Result is a query's value at the last scrape: a vector (Scalar false) or a number.
type Result struct {
	Series []Series
	Scalar bool
	Number float64
	// Span is the time between the first and the last scrape in a range function's window
	// (the widest, when several); 0 when the query has none.
	Span time.Duration
}

// String prints the value: "{outcome="accepted"} 0.52; {outcome="error"} 0" sorted by
// labels, "{} 3" for a series without labels, "empty" for no series.
func (r Result) String() string {
	if r.Scalar {
		return formatValue(r.Number)
	}
	if len(r.Series) == 0 {
		return "empty"
	}
	parts := make([]string, len(r.Series))
	for i, s := range r.Series {
		parts[i] = labelString(s.Labels) + " " + formatValue(s.Value)
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

func formatValue(v float64) string {
	if math.IsNaN(v) {
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// Eval evaluates query at the last of scrapes (in time order); range functions read the
// scrapes in their window.
func Eval(query string, scrapes []Scrape) (Result, error) {
	if len(scrapes) == 0 {
		return Result{}, fmt.Errorf("evaluate %q: no scrape", query)
	}
	toks, err := tokenize(query)
	if err != nil {
		return Result{}, fmt.Errorf("evaluate %q: %w", query, err)
	}
	p := &parser{toks: toks, scrapes: scrapes}
	v, err := p.expr()
	if err == nil && p.pos < len(p.toks) {
		err = fmt.Errorf("unexpected %q", p.toks[p.pos])
	}
	if err != nil {
		return Result{}, fmt.Errorf("evaluate %q: %w", query, err)
	}
	return Result{Series: v.vec, Scalar: v.scalar, Number: v.num, Span: p.span}, nil
}

// value is what an expression evaluates to: a number or a vector.
type value struct {
	scalar bool
	num    float64
	vec    []Series
}

type parser struct {
	toks    []string
	pos     int
	scrapes []Scrape
	span    time.Duration
}

func (p *parser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *parser) next() string {
	t := p.peek()
	p.pos++
	return t
}

func (p *parser) expect(t string) error {
	if got := p.next(); got != t {
		return fmt.Errorf("want %q, got %q", t, got)
	}
	return nil
}

var comparisons = map[string]func(a, b float64) bool{
	">": func(a, b float64) bool { return a > b }, "<": func(a, b float64) bool { return a < b },
	">=": func(a, b float64) bool { return a >= b }, "<=": func(a, b float64) bool { return a <= b },
	"==": func(a, b float64) bool { return a == b }, "!=": func(a, b float64) bool { return a != b },
}

var arithmetic = map[string]func(a, b float64) float64{
	"*": func(a, b float64) float64 { return a * b }, "/": func(a, b float64) float64 { return a / b },
}

// expr: a product, optionally compared to another.
func (p *parser) expr() (value, error) {
	l, err := p.product()
	if err != nil {
		return l, err
	}
	op := p.peek()
	cmp, ok := comparisons[op]
	if !ok {
		return l, nil
	}
	p.next()
	r, err := p.product()
	if err != nil {
		return l, err
	}
	return binary(l, r, func(a, b float64) (float64, bool) { return a, cmp(a, b) }, false)
}

// product: terms joined by * and /.
func (p *parser) product() (value, error) {
	l, err := p.term()
	for err == nil {
		f, ok := arithmetic[p.peek()]
		if !ok {
			return l, nil
		}
		p.next()
		var r value
		if r, err = p.term(); err == nil {
			l, err = binary(l, r, func(a, b float64) (float64, bool) { return f(a, b), true }, true)
		}
	}
	return l, err
}

// binary applies f to l and r: number and number, vector and number (either side), or
// two vectors matched on their labels. drop removes the metric name (arithmetic does).
func binary(l, r value, f func(a, b float64) (float64, bool), drop bool) (value, error) {
	if l.scalar && r.scalar {
		v, _ := f(l.num, r.num)
		return value{scalar: true, num: v}, nil
	}
	out := value{vec: []Series{}}
	emit := func(s Series, a, b float64) {
		if v, keep := f(a, b); keep {
			if drop {
				s.Name = ""
			}
			s.Value = v
			out.vec = append(out.vec, s)
		}
	}
	switch {
	case r.scalar:
		for _, s := range l.vec {
			emit(s, s.Value, r.num)
		}
	case l.scalar:
		for _, s := range r.vec {
			emit(s, l.num, s.Value)
		}
	default:
		right := map[string]float64{}
		for _, s := range r.vec {
			right[key("", s.Labels)] = s.Value
		}
		for _, s := range l.vec {
			if b, ok := right[key("", s.Labels)]; ok {
				emit(s, s.Value, b)
			}
		}
	}
	return out, nil
}

// term: a number, a parenthesised expression, a function, an aggregation, a selector.
func (p *parser) term() (value, error) {
	t := p.next()
	switch {
	case t == "(":
		v, err := p.expr()
		if err != nil {
			return v, err
		}
		return v, p.expect(")")
	case t != "" && (t[0] >= '0' && t[0] <= '9' || t[0] == '.'):
		n, err := strconv.ParseFloat(t, 64)
		return value{scalar: true, num: n}, err
	case t == "rate" || t == "increase" || t == "max_over_time":
		return p.rangeFunc(t)
	case t == "histogram_quantile":
		return p.quantile()
	case aggregations[t] != nil:
		return p.aggregate(t)
	case isIdent(t):
		return p.selector(t)
	}
	return value{}, fmt.Errorf("unexpected %q", t)
}

func isIdent(t string) bool {
	return t != "" && (t[0] == '_' || t[0] == ':' || t[0] >= 'a' && t[0] <= 'z' || t[0] >= 'A' && t[0] <= 'Z')
}

// matcher is one label matcher of a selector.
type matcher struct {
	name, op, val string
	re            *regexp.Regexp
}

func (m matcher) matches(labels map[string]string) bool {
	v := labels[m.name]
	switch m.op {
	case "=":
		return v == m.val
	case "!=":
		return v != m.val
	case "=~":
		return m.re.MatchString(v)
	}
	return !m.re.MatchString(v) // !~
}

// matchers reads the selector's {...} if there is one.
func (p *parser) matchers() ([]matcher, error) {
	if p.peek() != "{" {
		return nil, nil
	}
	p.next()
	var ms []matcher
	for p.peek() != "}" {
		m := matcher{name: p.next(), op: p.next()}
		val := p.next()
		if !isIdent(m.name) || len(val) < 2 || val[0] != '"' {
			return nil, fmt.Errorf("bad matcher %s%s%s", m.name, m.op, val)
		}
		m.val = val[1 : len(val)-1]
		switch m.op {
		case "=", "!=":
		case "=~", "!~":
			re, err := regexp.Compile("^(?:" + m.val + ")$")
			if err != nil {
				return nil, fmt.Errorf("matcher %s: %w", m.name, err)
			}
			m.re = re
		default:
			return nil, fmt.Errorf("bad matcher operator %q", m.op)
		}
		ms = append(ms, m)
		if p.peek() == "," {
			p.next()
		}
	}
	return ms, p.expect("}")
}

// selector: name{...} at the last scrape.
func (p *parser) selector(name string) (value, error) {
	ms, err := p.matchers()
	if err != nil {
		return value{}, err
	}
	return value{vec: pick(p.scrapes[len(p.scrapes)-1], name, ms)}, nil
}

func pick(s Scrape, name string, ms []matcher) []Series {
	out := []Series{}
next:
	for _, ser := range s.Series {
		if ser.Name != name {
			continue
		}
		for _, m := range ms {
			if !m.matches(ser.Labels) {
				continue next
			}
		}
		out = append(out, ser)
	}
	return out
}
