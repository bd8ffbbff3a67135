package passes

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/ir"
)

// A Pass transforms or checks a module. Passes are values, listed in a
// Registry; a Step of a Pipeline is a pass with its option values.
type Pass struct {
	// Name is kebab-case and unique in its registry.
	Name string
	// Doc's first line is a one-line summary; the rest explains.
	Doc string
	// Options the pass accepts, with their defaults.
	Options []Option
	// Preserves lists the analyses that stay valid after the pass; all
	// others are invalidated. PreservesAll keeps every analysis (checks).
	Preserves    []*analysis.Analyzer
	PreservesAll bool
	// Required passes run even beyond a bisection limit.
	Required bool
	// Nested passes take a sub-pipeline, written NAME(…), which Run runs
	// through Context.RunNested.
	Nested bool
	// Transient, when set, says why the module the pass leaves may break
	// the op table's rules until the passes after it have run: a step
	// inside a larger transformation. VerifyEach holds it to the IR's
	// structural rules only.
	Transient string
	// Run does the work, changing m in place.
	Run func(ctx *Context, m *ir.Module) error
}

// Summary is the first line of Doc.
func (p *Pass) Summary() string {
	s, _, _ := strings.Cut(p.Doc, "\n")
	return s
}

func (p *Pass) option(name string) *Option {
	for i := range p.Options {
		if p.Options[i].Name == name {
			return &p.Options[i]
		}
	}
	return nil
}

// OptionKind is the type of an option's value.
type OptionKind uint8

// The option kinds. A float option's value is always finite: NaN and the
// infinities are nonsense as a pass's parameter (with NaN every compare
// is false, so a bound would not even refuse it).
const (
	OptInt OptionKind = iota
	OptBool
	OptString
	OptFloat
)

func (k OptionKind) String() string {
	return [...]string{"int", "bool", "string", "float"}[k]
}

// Option is a typed, named pass option. Default is written as in a
// pipeline ("3", "true", "loss"). The pipeline parser refuses a value
// outside Range or Values, naming the pass and the option, so that no
// pass runs with nonsense; a default must lie inside them too.
type Option struct {
	Name    string
	Kind    OptionKind
	Default string
	Doc     string
	// Range bounds an int or float option; nil leaves an int unbounded
	// (but 64-bit) and a float any finite number.
	Range *Range
	// Values, when set, are the only values a string option takes.
	Values []string
}

// Range is the set of values an int or float option may take: from Min
// to Max, both included unless MinOpen excludes Min ("above 0": a
// learning rate). The CLI's numeric flags use it too.
type Range struct {
	Min, Max float64
	MinOpen  bool
}

// Contains reports whether v lies in the range (NaN never does).
func (r Range) Contains(v float64) bool {
	if r.MinOpen && v <= r.Min || !r.MinOpen && !(v >= r.Min) {
		return false
	}
	return v <= r.Max
}

// Describe spells the range for messages, for a value of kind k:
// "an integer from 1 to 10000", "a finite number above 0".
func (r Range) Describe(k OptionKind) string {
	num := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	if k == OptInt {
		num = func(f float64) string { return strconv.FormatFloat(f, 'f', 0, 64) }
	}
	what, lo, hi := "a finite number", num(r.Min), num(r.Max)
	if k == OptInt {
		what = "an integer"
		if r.Max >= math.MaxInt64 {
			hi = "" // no upper bound worth naming
		}
	} else if math.IsInf(r.Max, 1) || r.Max >= math.MaxFloat64 {
		hi = ""
	}
	switch {
	case r.MinOpen && hi == "":
		return what + " above " + lo
	case r.MinOpen:
		return what + " above " + lo + " and at most " + hi
	case hi == "":
		return what + " of at least " + lo
	}
	return what + " from " + lo + " to " + hi
}

// Constraint spells what values the option takes, for listings and
// messages: its kind and Range or Values ("an integer from 1 to 10000",
// "one of sgd, momentum, adam", "true or false").
func (o *Option) Constraint() string {
	switch {
	case o.Range != nil && (o.Kind == OptInt || o.Kind == OptFloat):
		return o.Range.Describe(o.Kind)
	case len(o.Values) > 0:
		return "one of " + strings.Join(o.Values, ", ")
	}
	switch o.Kind {
	case OptInt:
		return "an integer"
	case OptBool:
		return "true or false"
	case OptFloat:
		return "a finite number"
	}
	return "a string"
}

// parse converts s to the option's kind and checks it against the
// option's Range or Values.
func (o *Option) parse(s string) (any, error) {
	bad := func() error { return fmt.Errorf("option %s wants %s, not %q", o.Name, o.Constraint(), s) }
	switch o.Kind {
	case OptInt:
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || o.Range != nil && !o.Range.Contains(float64(v)) {
			return nil, bad()
		}
		return v, nil
	case OptBool:
		v, err := strconv.ParseBool(s)
		if err != nil {
			return nil, bad()
		}
		return v, nil
	case OptFloat:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || o.Range != nil && !o.Range.Contains(v) {
			return nil, bad()
		}
		return v, nil
	}
	if len(o.Values) > 0 && !slices.Contains(o.Values, s) {
		return nil, bad()
	}
	return s, nil
}

// Context is what a running pass sees: its options, the analysis cache,
// its execution, and a way to count what it did.
type Context struct {
	context.Context
	// Step is the pipeline entry being run: the pass and its options.
	Step *Step
	// Exec numbers this execution among all of the run.
	Exec *Execution
	// Analyses computes and caches read-only facts about the module.
	Analyses *analysis.Cache

	r *runner
}

func (c *Context) value(name string, kind OptionKind) any {
	o := c.Step.Pass.option(name)
	if o == nil || o.Kind != kind {
		panic(fmt.Sprintf("pass %s has no %s option %q", c.Step.Pass.Name, kind, name))
	}
	return c.Step.value(name)
}

// Int returns the value of an int option. Asking for an option the pass
// does not declare is a programming error and panics, which the manager
// reports as a failure of the pass.
func (c *Context) Int(name string) int64 { return c.value(name, OptInt).(int64) }

// Bool returns the value of a bool option.
func (c *Context) Bool(name string) bool { return c.value(name, OptBool).(bool) }

// String returns the value of a string option.
func (c *Context) String(name string) string { return c.value(name, OptString).(string) }

// Float returns the value of a float option.
func (c *Context) Float(name string) float64 { return c.value(name, OptFloat).(float64) }

// Count adds delta to the pass's counter name ("vars-removed"); the
// counters instrument reports them.
func (c *Context) Count(name string, delta int) {
	c.Exec.count(name, delta)
}

// Note keeps value under key for the instruments that ask this
// execution (Execution.Note) after the pass ran: completion's report, for
// the explorer's provenance. A second note of a key replaces the first.
func (c *Context) Note(key string, value any) {
	for i := range c.Exec.notes {
		if c.Exec.notes[i].key == key {
			c.Exec.notes[i].value = value
			return
		}
	}
	c.Exec.notes = append(c.Exec.notes, note{key, value})
}

// RunPipeline runs pl on m as nested steps of this execution, as a named
// pipeline (partition) runs its steps: instruments see each.
func (c *Context) RunPipeline(pl *Pipeline, m *ir.Module) error {
	return c.r.pipeline(pl, m, c.Exec)
}

// RunNested runs the step's sub-pipeline on m, as part of this run:
// instruments see each nested execution.
func (c *Context) RunNested(m *ir.Module) error {
	if c.Step.Sub == nil {
		return nil
	}
	return c.r.pipeline(c.Step.Sub, m, c.Exec)
}
