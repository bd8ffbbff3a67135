package analysis

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/distpass/distpass/ir"
)

// An Analyzer is a read-only fact about a module, declared as a value.
//
// Name identifies the analysis: the Cache keys results by it, so two
// analyzers with the same Name are the same analysis. It is kebab-case
// (lower-case words of letters and digits joined by "-"), and a
// parameterised analyzer appends its parameters as the pipeline syntax
// writes pass options: "local-shapes{rank=3}".
//
// Run computes the fact. It must not modify the module nor call the Cache
// (the results it needs are its Requires, which its Inputs hand it), and it
// must be deterministic: the Cache keeps its result, or its error, until
// the module changes.
type Analyzer struct {
	Name     string
	Doc      string
	Requires []*Analyzer
	Run      func(*Inputs) (any, error)
}

func (a *Analyzer) String() string { return displayName(a.Name) }

// Inputs is what an Analyzer's Run receives: the module, the analyzer being run, and
// the results of its Requires.
type Inputs struct {
	Module   *ir.Module
	Analyzer *Analyzer

	results []any // parallel to Analyzer.Requires
}

// Result returns the result of a, one of the running analyzer's Requires
// (matched by Name). Asking for an analyzer that is not required is a
// mistake in the analyzer's declaration, and panics.
func (p *Inputs) Result(a *Analyzer) any {
	for i, r := range p.Analyzer.Requires {
		if r == a || r.Name == a.Name {
			return p.results[i]
		}
	}
	panic("analysis " + p.Analyzer.String() + ": Result of " + a.String() + ", which is not in Requires")
}

// Validate checks a set of analyzers and everything they require,
// transitively: each is non-nil with a Run function and a non-empty Doc;
// names are kebab-case (see Analyzer) and unique (two different values
// may not share one); Requires has no cycle. It returns nil, or every
// problem joined, in the order of a depth-first walk from as.
func Validate(as []*Analyzer) error {
	v := validator{state: make(map[*Analyzer]uint8), byName: make(map[string]*Analyzer)}
	for i, a := range as {
		if a == nil {
			v.errs = append(v.errs, fmt.Errorf("analyzer %d of %d is nil", i, len(as)))
			continue
		}
		v.visit(a)
	}
	return errors.Join(v.errs...)
}

type validator struct {
	state  map[*Analyzer]uint8 // 1: on the current path, 2: done
	byName map[string]*Analyzer
	path   []*Analyzer
	errs   []error
}

func (v *validator) visit(a *Analyzer) {
	switch v.state[a] {
	case 1:
		i := len(v.path) - 1
		for v.path[i] != a {
			i--
		}
		var sb strings.Builder
		for _, p := range v.path[i:] {
			sb.WriteString(p.String())
			sb.WriteString(" -> ")
		}
		sb.WriteString(a.String())
		v.errs = append(v.errs, errors.New("analyzers form a cycle: "+sb.String()))
		return
	case 2:
		return
	}
	v.state[a] = 1
	v.path = append(v.path, a)
	v.check(a)
	for i, r := range a.Requires {
		if r == nil {
			v.errs = append(v.errs, fmt.Errorf("analyzer %s: Requires[%d] is nil", a, i))
			continue
		}
		v.visit(r)
	}
	v.path = v.path[:len(v.path)-1]
	v.state[a] = 2
}

func (v *validator) check(a *Analyzer) {
	switch {
	case a.Name == "":
		v.errs = append(v.errs, errors.New(`analyzer "": empty name`))
	case !validName(a.Name):
		v.errs = append(v.errs, fmt.Errorf("analyzer %s: name is not kebab-case", a))
	}
	if other, ok := v.byName[a.Name]; ok && other != a {
		v.errs = append(v.errs, fmt.Errorf("analyzer %s: name used by two different analyzers", a))
	} else {
		v.byName[a.Name] = a
	}
	if strings.TrimSpace(a.Doc) == "" {
		v.errs = append(v.errs, fmt.Errorf("analyzer %s: empty Doc", a))
	}
	if a.Run == nil {
		v.errs = append(v.errs, fmt.Errorf("analyzer %s: nil Run", a))
	}
}

// validName reports whether s is a kebab-case word list, optionally
// followed by "{key=value,...}" with kebab-case keys and values of
// letters, digits, '_', '.' and '-'.
func validName(s string) bool {
	base, params, hasParams := strings.Cut(s, "{")
	if !kebab(base) {
		return false
	}
	if !hasParams {
		return true
	}
	params, ok := strings.CutSuffix(params, "}")
	if !ok || params == "" {
		return false
	}
	for kv := range strings.SplitSeq(params, ",") {
		k, val, ok := strings.Cut(kv, "=")
		if !ok || !kebab(k) || val == "" {
			return false
		}
		for i := 0; i < len(val); i++ {
			c := val[i]
			if !(isLower(c) || isDigit(c) || 'A' <= c && c <= 'Z' || c == '_' || c == '.' || c == '-') {
				return false
			}
		}
	}
	return true
}

// kebab reports whether s is [a-z][a-z0-9]* words joined by single '-'.
func kebab(s string) bool {
	if s == "" || !isLower(s[0]) || s[len(s)-1] == '-' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c == '-' {
			if s[i-1] == '-' {
				return false
			}
			continue
		}
		if !isLower(c) && !isDigit(c) {
			return false
		}
	}
	return true
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// displayName returns an analyzer name for messages: as is when valid,
// quoted otherwise, so that a stray space or an empty name shows.
func displayName(s string) string {
	if validName(s) {
		return s
	}
	return strconv.Quote(s)
}

// Closure returns as and everything they require, transitively, each
// once, in depth-first order with requirements first. A pass that keeps
// the facts of as true keeps true what they were computed from, so its
// preserved set is Closure(as...): Invalidate drops an analysis whose
// requirement is not preserved, however the analysis itself is listed.
func Closure(as ...*Analyzer) []*Analyzer {
	var out []*Analyzer
	seen := make(map[*Analyzer]bool)
	var visit func(a *Analyzer)
	visit = func(a *Analyzer) {
		if a == nil || seen[a] {
			return
		}
		seen[a] = true
		for _, r := range a.Requires {
			visit(r)
		}
		out = append(out, a)
	}
	for _, a := range as {
		visit(a)
	}
	return out
}
