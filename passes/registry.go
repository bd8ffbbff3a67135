package passes

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/distpass/distpass/internal/suggest"
)

// Registry is a table of passes and of the rules on their order.
type Registry struct {
	passes []*Pass
	byName map[string]*Pass
	order  []OrderRule
}

// OrderRule says that pass Before must run before pass After whenever a
// pipeline holds both, for the reason Why.
type OrderRule struct {
	Before, After string
	Why           string
}

// NewRegistry returns a registry of passes and order rules, checked as
// Validate does.
func NewRegistry(passes []*Pass, order []OrderRule) (*Registry, error) {
	r := &Registry{byName: make(map[string]*Pass, len(passes))}
	var errs []error
	for _, p := range passes {
		if err := validatePass(p); err != nil {
			errs = append(errs, err)
			continue
		}
		if r.byName[p.Name] != nil {
			errs = append(errs, fmt.Errorf("pass %s registered twice", p.Name))
			continue
		}
		r.byName[p.Name] = p
		r.passes = append(r.passes, p)
	}
	for _, o := range order {
		switch {
		case r.byName[o.Before] == nil:
			errs = append(errs, fmt.Errorf("order rule %s before %s: no pass %s", o.Before, o.After, o.Before))
		case r.byName[o.After] == nil:
			errs = append(errs, fmt.Errorf("order rule %s before %s: no pass %s", o.Before, o.After, o.After))
		case o.Why == "":
			errs = append(errs, fmt.Errorf("order rule %s before %s: no reason given", o.Before, o.After))
		case o.Before == o.After:
			errs = append(errs, fmt.Errorf("order rule %s before %s: a pass cannot precede itself", o.Before, o.After))
		}
	}
	r.order = order
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return r, nil
}

func validatePass(p *Pass) error {
	if !isKebab(p.Name) {
		return fmt.Errorf("pass name %q is not kebab-case", p.Name)
	}
	if strings.TrimSpace(p.Summary()) == "" {
		return fmt.Errorf("pass %s has no doc", p.Name)
	}
	if p.Run == nil {
		return fmt.Errorf("pass %s has no Run", p.Name)
	}
	seen := map[string]bool{}
	for _, o := range p.Options {
		if !isKebab(o.Name) {
			return fmt.Errorf("pass %s: option name %q is not kebab-case", p.Name, o.Name)
		}
		if seen[o.Name] {
			return fmt.Errorf("pass %s: option %s declared twice", p.Name, o.Name)
		}
		seen[o.Name] = true
		if r := o.Range; r != nil && (o.Kind != OptInt && o.Kind != OptFloat || !(r.Min <= r.Max) ||
			o.Kind == OptInt && (math.Abs(r.Min) > 1<<53 || math.Abs(r.Max) > 1<<53)) {
			return fmt.Errorf("pass %s: option %s has a range that is not one of its kind's", p.Name, o.Name)
		}
		if len(o.Values) > 0 && o.Kind != OptString {
			return fmt.Errorf("pass %s: option %s has values but is not a string option", p.Name, o.Name)
		}
		if _, err := o.parse(o.Default); err != nil {
			return fmt.Errorf("pass %s: default of %v", p.Name, err)
		}
		if o.Doc == "" {
			return fmt.Errorf("pass %s: option %s has no doc", p.Name, o.Name)
		}
	}
	return nil
}

func isKebab(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return 'a' <= s[0] && s[0] <= 'z'
}

// Lookup returns the pass named name, or nil.
func (r *Registry) Lookup(name string) *Pass { return r.byName[name] }

// Passes returns the registered passes sorted by name.
func (r *Registry) Passes() []*Pass {
	ps := append([]*Pass(nil), r.passes...)
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	return ps
}

// OrderRules returns the order rules in registration order.
func (r *Registry) OrderRules() []OrderRule { return append([]OrderRule(nil), r.order...) }

// suggest returns " (did you mean x?)" for a near miss, or "".
func (r *Registry) suggest(name string) string {
	best, bestD := "", 3
	for _, p := range r.Passes() {
		if d := suggest.Distance(name, p.Name); d < bestD {
			best, bestD = p.Name, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// checkOrder applies the order rules to the pipeline's steps in the order
// they are written, sub-pipelines included (Go's passOrder does the same
// on its flat list): an After step written before a Before step breaks
// the rule.
func (r *Registry) checkOrder(pl *Pipeline) error {
	var flat []*Step
	var walk func(*Pipeline)
	walk = func(pl *Pipeline) {
		for _, s := range pl.Steps {
			flat = append(flat, s)
			if s.Sub != nil {
				walk(s.Sub)
			}
		}
	}
	walk(pl)
	for _, o := range r.order {
		var after *Step
		for _, s := range flat {
			if s.Pass.Name == o.After && after == nil {
				after = s
			}
			if s.Pass.Name == o.Before && after != nil {
				return &PipelineError{Col: after.Col, Msg: fmt.Sprintf("%s must run before %s: %s", o.Before, o.After, o.Why)}
			}
		}
	}
	return nil
}
