package passes

import (
	"context"
	"fmt"
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

// The option kinds.
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
// pipeline ("3", "true", "loss").
type Option struct {
	Name    string
	Kind    OptionKind
	Default string
	Doc     string
}

// parse converts s to the option's kind.
func (o *Option) parse(s string) (any, error) {
	switch o.Kind {
	case OptInt:
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("option %s wants an integer, not %q", o.Name, s)
		}
		return v, nil
	case OptBool:
		v, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("option %s wants true or false, not %q", o.Name, s)
		}
		return v, nil
	case OptFloat:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("option %s wants a number, not %q", o.Name, s)
		}
		return v, nil
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

// RunNested runs the step's sub-pipeline on m, as part of this run:
// instruments see each nested execution.
func (c *Context) RunNested(m *ir.Module) error {
	if c.Step.Sub == nil {
		return nil
	}
	return c.r.pipeline(c.Step.Sub, m, c.Exec)
}
