package custom

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// OpType is one op type of a definition file.
type OpType struct {
	Name    string
	Doc     string
	Inputs  []Input
	Outputs []string
	Attrs   []ops.Attr
	Rule    *Rule
	// Meaning is the ops the op type stands for, over its slot names and
	// temporaries, without ids.
	Meaning []*ir.Op

	pos string // file:line of the optype statement, for messages
}

// Input is an input slot.
type Input struct {
	Name   string
	NoGrad bool
}

// attrKinds are the attr kinds a definition may declare, by name.
var attrKinds = func() map[string]ir.AttrKind {
	m := map[string]ir.AttrKind{}
	for _, k := range []ir.AttrKind{ir.KindBool, ir.KindInt, ir.KindFloat, ir.KindString, ir.KindBools, ir.KindInts,
		ir.KindFloats, ir.KindStrings, ir.KindLong, ir.KindLongs, ir.KindFloat64, ir.KindFloat64s} {
		m[k.String()] = k
	}
	return m
}()

// Load reads the definition file at path and defines its op types.
func Load(path string) ([]*OpType, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ts, err := Parse(path, src)
	if err != nil {
		return nil, err
	}
	return ts, Define(ts...)
}

// Parse reads a definition file's text; name is used in error positions
// (name:line:col). It checks the grammar and what one file can know (a
// meaning that writes an input, reads a temporary before writing it);
// Define checks the rest against the op table.
func Parse(name string, src []byte) ([]*OpType, error) {
	p := &defParser{file: name}
	lines := strings.Split(string(src), "\n")
	var cur *OpType
	inMeaning := false
	for i, line := range lines {
		p.line = i + 1
		text := strings.TrimSpace(line)
		if text == "" || text[0] == '#' {
			continue
		}
		p.col = strings.Index(line, text) + 1
		switch {
		case inMeaning && text == "}":
			inMeaning = false
		case inMeaning:
			op, err := ir.ParseOp(name, p.line, line)
			if err != nil {
				return nil, err
			}
			cur.Meaning = append(cur.Meaning, op)
		case cur == nil:
			f := strings.Fields(text)
			if len(f) != 3 || f[0] != "optype" || f[2] != "{" {
				return nil, p.errf(0, `want "optype NAME {"`)
			}
			cur = &OpType{Name: f[1], pos: fmt.Sprintf("%s:%d", name, p.line)}
		case text == "}":
			if err := p.finish(cur); err != nil {
				return nil, err
			}
			p.types = append(p.types, cur)
			cur = nil
		default:
			if err := p.statement(cur, text, &inMeaning); err != nil {
				return nil, err
			}
		}
	}
	if cur != nil {
		return nil, &ir.ParseError{File: name, Line: len(lines), Col: 1, Msg: "optype " + cur.Name + " is not closed: want \"}\""}
	}
	return p.types, nil
}

type defParser struct {
	file      string
	line, col int // the current statement's line, and its first column
	types     []*OpType
}

// errf is an error at column col+off of the current line.
func (p *defParser) errf(off int, format string, args ...any) error {
	return &ir.ParseError{File: p.file, Line: p.line, Col: p.col + off, Msg: fmt.Sprintf(format, args...)}
}

// statement reads one statement of an optype's body.
func (p *defParser) statement(t *OpType, text string, inMeaning *bool) error {
	kw, rest, _ := strings.Cut(text, " ")
	rest = strings.TrimSpace(rest)
	off := len(text) - len(rest) // the column of rest, from the statement's
	switch kw {
	case "doc":
		s, err := strconv.Unquote(rest)
		if err != nil {
			return p.errf(off, "want a quoted string")
		}
		t.Doc = s
	case "input":
		f := strings.Fields(rest)
		if len(f) == 0 || len(f) > 2 || len(f) == 2 && f[1] != "nograd" {
			return p.errf(off, "want input NAME [nograd]")
		}
		t.Inputs = append(t.Inputs, Input{Name: f[0], NoGrad: len(f) == 2})
	case "output":
		f := strings.Fields(rest)
		if len(f) != 1 {
			return p.errf(off, "want output NAME")
		}
		t.Outputs = append(t.Outputs, f[0])
	case "attr":
		decl, val, hasVal := strings.Cut(rest, "=")
		f := strings.Fields(strings.ReplaceAll(decl, ":", " : "))
		if len(f) != 3 || f[1] != ":" {
			return p.errf(off, "want attr NAME : KIND [= VALUE]")
		}
		k, ok := attrKinds[f[2]]
		if !ok {
			return p.errf(off, "attr %s: unknown kind %q (bool, int, long, float, float64, string, or a list of one: ints, ...)", f[0], f[2])
		}
		a := ops.Attr{Name: f[0], Type: k}
		if hasVal {
			// The value sits after the '=' of the line itself: parse it
			// there, so that its errors have the file's columns.
			line := strings.Repeat(" ", p.col-1+off+len(decl)+1) + val
			v, err := ir.ParseValue(p.file, p.line, line)
			if err != nil {
				return err
			}
			a.Default = v
		}
		t.Attrs = append(t.Attrs, a)
	case "rule":
		if t.Rule != nil {
			return p.errf(0, "a second rule: an op type has one")
		}
		r, at, err := parseRule(rest)
		if err != nil {
			return p.errf(off+at, "rule: %v", err)
		}
		t.Rule = r
	case "meaning":
		if rest != "{" {
			return p.errf(off, `want "meaning {"`)
		}
		if t.Meaning != nil {
			return p.errf(0, "a second meaning: an op type has one")
		}
		*inMeaning = true
	default:
		return p.errf(0, "unknown statement %q (doc, input, output, attr, rule, meaning)", kw)
	}
	return nil
}

// finish checks an optype once its body is read.
func (p *defParser) finish(t *OpType) error {
	at := func(format string, args ...any) error {
		return fmt.Errorf("%s: optype %s: %s", t.pos, t.Name, fmt.Sprintf(format, args...))
	}
	if len(t.Outputs) == 0 {
		return at("no output slot")
	}
	if t.Rule == nil {
		return at("no rule: the rule gives the outputs' shapes and how the op distributes")
	}
	if len(t.Meaning) == 0 {
		return at("no meaning: the meaning gives the op its kernel and its gradient")
	}
	slots := map[string]bool{}
	for _, in := range t.Inputs {
		if slots[in.Name] {
			return at("slot %s is declared twice", in.Name)
		}
		slots[in.Name] = true
	}
	for _, o := range t.Outputs {
		if slots[o] {
			return at("slot %s is declared twice", o)
		}
		slots[o] = true
	}
	spelled := map[string]bool{}
	for _, s := range append(slices.Clone(t.Rule.In), t.Rule.Out...) {
		spelled[s.Slot] = true
	}
	for _, in := range t.Rule.In {
		if !slices.ContainsFunc(t.Inputs, func(x Input) bool { return x.Name == in.Slot }) {
			return at("the rule spells input %s, which is not an input slot", in.Slot)
		}
	}
	for _, o := range t.Rule.Out {
		if !slices.Contains(t.Outputs, o.Slot) {
			return at("the rule spells output %s, which is not an output slot", o.Slot)
		}
	}
	for s := range slots {
		if !spelled[s] {
			return at("the rule does not spell slot %s", s)
		}
	}
	return checkMeaning(t, at)
}

// checkMeaning checks that t's meaning writes each temporary once before
// reading it, every output and no input, with no reserved name.
func checkMeaning(t *OpType, at func(format string, args ...any) error) error {
	written := map[string]bool{}
	for _, in := range t.Inputs {
		written[in.Name] = true
	}
	for _, op := range t.Meaning {
		if op.Type == t.Name {
			return at("its meaning uses %s itself", t.Name)
		}
		for _, s := range op.Inputs {
			for _, a := range s.Args {
				if strings.Contains(a, "@") {
					return at("meaning: %s reads %s: names with @ are reserved", op.Type, a)
				}
				if !written[a] {
					return at("meaning: %s reads %s before anything writes it", op.Type, a)
				}
			}
		}
		for _, s := range op.Outputs {
			for _, a := range s.Args {
				switch {
				case strings.Contains(a, "@"):
					return at("meaning: %s writes %s: names with @ are reserved", op.Type, a)
				case slices.ContainsFunc(t.Inputs, func(x Input) bool { return x.Name == a }):
					return at("meaning: %s writes input %s", op.Type, a)
				case written[a]:
					return at("meaning: %s writes %s a second time", op.Type, a)
				}
				written[a] = true
			}
		}
	}
	for _, o := range t.Outputs {
		if !written[o] {
			return at("meaning: no op writes output %s", o)
		}
	}
	return nil
}
