package passes

import (
	"fmt"
	"strconv"
	"strings"
)

// Pipeline is a sequence of steps, parsed from text by Registry.Parse.
type Pipeline struct {
	Steps []*Step
}

// Step is one pass of a pipeline with the options written for it and,
// for a nested pass, its sub-pipeline.
type Step struct {
	Pass *Pass
	Sub  *Pipeline
	// Col is the 1-based column of the step's name in the pipeline text.
	Col int

	opts []optValue // as written, in order
}

type optValue struct {
	name, text string // text as written (quotes removed)
	quoted     bool
	val        any
}

// value returns the option's value: as written, or the default.
func (s *Step) value(name string) any {
	for _, o := range s.opts {
		if o.name == name {
			return o.val
		}
	}
	opt := s.Pass.option(name)
	v, err := opt.parse(opt.Default)
	if err != nil {
		panic(fmt.Sprintf("pass %s: default of option %s: %v", s.Pass.Name, name, err))
	}
	return v
}

// Label is the step as written, without its sub-pipeline:
// "partition{rank=3}".
func (s *Step) Label() string {
	var sb strings.Builder
	s.label(&sb)
	return sb.String()
}

func (s *Step) label(sb *strings.Builder) {
	sb.WriteString(s.Pass.Name)
	if len(s.opts) > 0 {
		sb.WriteByte('{')
		for i, o := range s.opts {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(o.name)
			sb.WriteByte('=')
			if o.quoted {
				sb.WriteString(strconv.Quote(o.text))
			} else {
				sb.WriteString(o.text)
			}
		}
		sb.WriteByte('}')
	}
}

// String prints the pipeline as text that parses back to it.
func (pl *Pipeline) String() string {
	var sb strings.Builder
	pl.write(&sb)
	return sb.String()
}

func (pl *Pipeline) write(sb *strings.Builder) {
	for i, s := range pl.Steps {
		if i > 0 {
			sb.WriteByte(',')
		}
		s.label(sb)
		if s.Sub != nil {
			sb.WriteByte('(')
			s.Sub.write(sb)
			sb.WriteByte(')')
		}
	}
}

// MaxPipelineDepth is how deep sub-pipelines may nest: repeat(repeat(…))
// a few levels is all a pipeline needs, and the parser, the printer and
// the pass manager walk sub-pipelines recursively.
const MaxPipelineDepth = 100

// PipelineError is a malformed pipeline: Col is the 1-based column.
type PipelineError struct {
	Col int
	Msg string
}

func (e *PipelineError) Error() string { return fmt.Sprintf("pipeline:1:%d: %s", e.Col, e.Msg) }

// Parse reads pipeline text:
//
//	pipeline = step { "," step } .
//	step     = name [ "{" [ option { "," option } ] "}" ] [ "(" pipeline ")" ] .
//	option   = name "=" ( word | quoted-string ) .
//
// Names are kebab-case; a word runs to the next ",", "}" or space; quoted
// strings are Go-quoted. White space between tokens is ignored. Unknown
// passes and options, bad values, unbalanced brackets, sub-pipelines
// nested more than MaxPipelineDepth deep and broken ordering rules are
// errors with the column.
func (r *Registry) Parse(text string) (*Pipeline, error) {
	ps := &pipelineParser{r: r, s: text}
	pl := ps.pipeline(0)
	if ps.err == nil && ps.i < len(ps.s) {
		ps.fail(ps.i, "unexpected %q", ps.s[ps.i])
	}
	if ps.err != nil {
		return nil, ps.err
	}
	if err := r.checkOrder(pl); err != nil {
		return nil, err
	}
	return pl, nil
}

// MustParse is Parse for pipelines written in code; an error panics.
func (r *Registry) MustParse(text string) *Pipeline {
	pl, err := r.Parse(text)
	if err != nil {
		panic(err)
	}
	return pl
}

type pipelineParser struct {
	r   *Registry
	s   string
	i   int
	err *PipelineError
}

func (p *pipelineParser) fail(at int, format string, args ...any) {
	if p.err == nil {
		p.err = &PipelineError{Col: at + 1, Msg: fmt.Sprintf(format, args...)}
	}
	p.i = len(p.s)
}

func (p *pipelineParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *pipelineParser) peek() byte {
	p.space()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func isWordByte(c byte) bool {
	return c == '-' || c == '_' || c == '.' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func (p *pipelineParser) word(what string) (string, int) {
	p.space()
	start := p.i
	for p.i < len(p.s) && isWordByte(p.s[p.i]) {
		p.i++
	}
	if p.i == start {
		if p.i < len(p.s) {
			p.fail(p.i, "expected %s, found %q", what, p.s[p.i])
		} else {
			p.fail(p.i, "expected %s, found end of pipeline", what)
		}
	}
	return p.s[start:p.i], start
}

// pipeline reads steps until the end or, when depth > 0, a ")".
func (p *pipelineParser) pipeline(depth int) *Pipeline {
	pl := &Pipeline{}
	for p.err == nil {
		pl.Steps = append(pl.Steps, p.step(depth))
		c := p.peek()
		if c != ',' {
			if c == ')' && depth == 0 {
				p.fail(p.i, "unbalanced \")\"")
			}
			break
		}
		p.i++
	}
	return pl
}

func (p *pipelineParser) step(depth int) *Step {
	name, col := p.word("pass name")
	if p.err != nil {
		return nil
	}
	pass := p.r.Lookup(name)
	if pass == nil {
		p.fail(col, "unknown pass %q%s", name, p.r.suggest(name))
		return nil
	}
	st := &Step{Pass: pass, Col: col + 1}
	if p.peek() == '{' {
		open := p.i
		p.i++
		for p.err == nil {
			if p.peek() == '}' && len(st.opts) == 0 {
				break
			}
			p.option(st)
			c := p.peek()
			if c == ',' {
				p.i++
				continue
			}
			if c != '}' {
				if c == 0 {
					p.fail(open, "unbalanced \"{\"")
				} else {
					p.fail(p.i, "expected \",\" or \"}\" in options of %s, found %q", name, c)
				}
			}
			break
		}
		p.i++
	}
	if p.peek() == '(' {
		open := p.i
		if !pass.Nested {
			p.fail(p.i, "pass %s takes no sub-pipeline", name)
			return nil
		}
		if depth+1 > MaxPipelineDepth {
			p.fail(open, "sub-pipelines nest more than %d deep", MaxPipelineDepth)
			return nil
		}
		p.i++
		st.Sub = p.pipeline(depth + 1)
		if p.err == nil {
			if p.peek() != ')' {
				p.fail(open, "unbalanced \"(\"")
				return nil
			}
			p.i++
		}
	} else if pass.Nested && p.err == nil {
		p.fail(p.i, "pass %s needs a sub-pipeline: %s(…)", name, name)
	}
	if p.err == nil && p.peek() == '}' {
		p.fail(p.i, "unbalanced \"}\"")
	}
	return st
}

func (p *pipelineParser) option(st *Step) {
	key, col := p.word("option name")
	if p.err != nil {
		return
	}
	opt := st.Pass.option(key)
	if opt == nil {
		p.fail(col, "pass %s has no option %q%s", st.Pass.Name, key, optionList(st.Pass))
		return
	}
	for _, o := range st.opts {
		if o.name == key {
			p.fail(col, "option %s given twice", key)
			return
		}
	}
	if p.peek() != '=' {
		p.fail(p.i, "expected \"=\" after option %s", key)
		return
	}
	p.i++
	p.space()
	vcol := p.i
	ov := optValue{name: key}
	if p.i < len(p.s) && p.s[p.i] == '"' {
		end := p.i + 1
		for end < len(p.s) && p.s[end] != '"' {
			if p.s[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(p.s) {
			p.fail(vcol, "unterminated string")
			return
		}
		text, err := strconv.Unquote(p.s[p.i : end+1])
		if err != nil {
			p.fail(vcol, "invalid string %s", p.s[p.i:end+1])
			return
		}
		ov.text, ov.quoted = text, true
		p.i = end + 1
	} else {
		start := p.i
		for p.i < len(p.s) && !strings.ContainsRune(",}() \t\n{", rune(p.s[p.i])) {
			p.i++
		}
		ov.text = p.s[start:p.i]
	}
	v, err := opt.parse(ov.text)
	if err != nil {
		p.fail(vcol, "pass %s: %v", st.Pass.Name, err)
		return
	}
	ov.val = v
	st.opts = append(st.opts, ov)
}

func optionList(p *Pass) string {
	if len(p.Options) == 0 {
		return " (it has none)"
	}
	names := make([]string, len(p.Options))
	for i, o := range p.Options {
		names[i] = o.Name
	}
	return " (options: " + strings.Join(names, ", ") + ")"
}
