package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/distpass/distpass/internal/suggest"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/sim"
)

const opsArgs = "[-json] [-check] [TYPE]"

// opsDoc is ops's help: the columns and the JSON schema.
const opsDoc = `Ops lists every op type the op table (package ops) defines,
one a line, sorted by type: its kernel (yes when the simulator has a
kernel for it; collectives and control flow, which the interpreter runs
itself, show -), its gradient (yes when the grad op is TYPE_grad, else
the grad op's type; - for none), how many impls the registry has for it
(of the impl type named after it; default:0 and elementwise:0 lower any
op; ops TYPE names them), its
sharding rule (yes when the op table gives it one: the rule completion
propagates shardings through), then its slots
(inputs -> outputs; ? marks an optional slot, ... a variadic one), its
attrs in braces (name:kind=default) and its shape rule.

With TYPE, it shows that one def whole: its doc, each slot (optional,
variadic, no-grad), each attr (kind, default, allowed values), traits,
shape rule, grad op and the grad op's slots, kernel, impls, for a grad
op the op types it is the gradient of, and its sharding rule: rule, as
the rule prints itself on sample ops of the type (the notation of a
custom op's rule: a lowercase letter a dim that may split, reduced when
only inputs have it, by the word after; an uppercase one a dim kept
whole; 1 a size-1 dim; ... the leading dims; * a free slot), with the
attrs it was printed for in brackets, and why, in prose. An unknown TYPE is an error
that names the nearest defined types.

-check instead checks the table, with the op types -defs added: every
kernel's type defined with an inference, every type with a kernel and a
gradient with a grad kernel, every op but the collectives with a
sharding rule or a reason it has none; it lists every broken promise
and exits 1, or prints "ok" and the count of op types.

-json prints one JSON array instead (of every def, or of TYPE's alone),
sorted by type:
  [DEF...]
  DEF:  {"type": T, "doc": S, "inputs": [SLOT...], "outputs": [SLOT...],
         "attrs": [ATTR...], "traits": [S...] (ops.Traits' names: "elementwise",
         "reduction", "view", "collective", "monotone", ...), "shape": S (the
         one-line shape rule, "" for none), "grad": T ("": none), "grad_of": [T...] (the
         types whose grad op this is), "kernel": BOOL, "impls": [IMPL...],
         "rule": S (the sharding rule as it prints itself, in the notation of
         custom ops' rules, "" for none), "sharding": S (why: the rule in
         prose, with the Paddle rule it follows, "" for none)}
  SLOT: {"name": S, "optional": BOOL, "variadic": BOOL, "no_grad": BOOL,
         "numbered": BOOL (name stands for name0, name1, ...: PIR's positions)}
  ATTR: {"name": S, "kind": K (bool, int, float, string, ints, ...),
         "default": V|null (null: no default), "allowed": [V...] (empty:
         any)}, V the value as JSON (a number, string, bool or array; a
         non-finite float or a block or var ref as its .dpir text)
  IMPL: {"ref": "T:N", "name": S, "doc": S}`

func runOps(env *Env, args []string) int {
	fs := newFlagSet(env, "ops", opsArgs, opsDoc)
	asJSON := fs.Bool("json", false, "print a JSON array of defs (schema above)")
	checkTable := fs.Bool("check", false, "check the table's promises (kernels, grad kernels, rules)")
	pos, code, ok := parseFlagsAnywhere(env, fs, args)
	if !ok {
		return code
	}
	if *checkTable {
		if err := sim.CheckTable(sim.DefaultKernels()); err != nil {
			fmt.Fprintf(env.Stderr, "distpass ops: %v\n", err)
			return ExitFail
		}
		fmt.Fprintf(env.Stdout, "ok: %d op types\n", len(ops.All()))
		return ExitOK
	}
	if len(pos) > 1 {
		fmt.Fprintf(env.Stderr, "distpass ops: unexpected argument %q\n", pos[1])
		return ExitUsage
	}
	defs := ops.All()
	if len(pos) == 1 {
		d := ops.Lookup(pos[0])
		if d == nil {
			fmt.Fprintf(env.Stderr, "distpass ops: %s\n", unknownOpType(pos[0]))
			return ExitUsage
		}
		defs = []*ops.Def{d}
	}
	facts := newOpFacts()
	var err error
	switch {
	case *asJSON:
		err = writeOpsJSON(env.Stdout, defs, facts)
	case len(pos) == 1:
		err = writeOp(env.Stdout, defs[0], facts)
	default:
		err = writeOpList(env.Stdout, defs, facts)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "distpass ops: %v\n", err)
		return ExitFail
	}
	return ExitOK
}

// opFacts is what other packages know of op types: the simulator's
// kernels and the registry's impls.
type opFacts struct {
	kernels sim.Kernels
	impls   map[string]*lower.Container
}

func newOpFacts() *opFacts {
	f := &opFacts{kernels: sim.DefaultKernels(), impls: map[string]*lower.Container{}}
	for _, c := range lower.DefaultRegistry().Containers() {
		f.impls[c.Type] = c
	}
	return f
}

func (f *opFacts) kernel(t string) bool { return f.kernels[t] != nil }

// implNames returns the names of t's impls, in index order.
func (f *opFacts) implNames(t string) []string {
	c := f.impls[t]
	if c == nil {
		return nil
	}
	names := make([]string, len(c.Impls))
	for i, im := range c.Impls {
		names[i] = im.Name
	}
	return names
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "-"
}

// attrList spells d's attrs as {a:int=1, b:bool=false}, or "" for none.
func attrList(d *ops.Def) string {
	if len(d.Attrs) == 0 {
		return ""
	}
	parts := make([]string, len(d.Attrs))
	for i, a := range d.Attrs {
		parts[i] = a.String()
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// writeOpList writes one line per def. The short columns are aligned; the
// slots, attrs and shape rule, of any length, end the line.
func writeOpList(w io.Writer, defs []*ops.Def, f *opFacts) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TYPE\tKERNEL\tGRAD\tIMPLS\tSHARDING\tSLOTS {ATTRS} SHAPE")
	for _, d := range defs {
		rest := d.Signature()
		if a := attrList(d); a != "" {
			rest += "  " + a
		}
		if d.Shape != "" {
			rest += "  " + d.Shape
		}
		// The short forms keep a line's start narrow: a grad named
		// TYPE_grad is "yes", impls are counted (ops TYPE names them).
		grad := d.GradType()
		if grad == d.Type+"_grad" {
			grad = "yes"
		}
		impls := "-"
		if n := len(f.implNames(d.Type)); n > 0 {
			impls = strconv.Itoa(n)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", d.Type, yes(f.kernel(d.Type)), dash(grad), impls, yes(d.Sharding != nil), rest)
	}
	return tw.Flush()
}

// writeOp writes one def whole: a line per part, "part: value", and the
// slots, attrs and impls as aligned rows below their part's line.
func writeOp(w io.Writer, d *ops.Def, f *opFacts) error {
	var sb strings.Builder
	line := func(part, value string) {
		if value == "" {
			fmt.Fprintf(&sb, "%s:\n", part) // its rows follow
			return
		}
		fmt.Fprintf(&sb, "%-9s %s\n", part+":", value)
	}
	rows := func(rs [][]string) {
		tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
		for _, r := range rs {
			fmt.Fprintf(tw, "  %s\n", strings.Join(r, "\t"))
		}
		tw.Flush()
	}
	if d.Doc != "" {
		fmt.Fprintf(&sb, "%s: %s\n", d.Type, d.Doc)
	} else {
		fmt.Fprintf(&sb, "%s\n", d.Type)
	}
	for _, side := range []struct {
		name  string
		slots []ops.Slot
	}{{"inputs", d.Inputs}, {"outputs", d.Outputs}} {
		if len(side.slots) == 0 {
			line(side.name, "none")
			continue
		}
		line(side.name, "")
		var rs [][]string
		for _, s := range side.slots {
			notes := []string{"required"}
			if s.Optional {
				notes[0] = "optional"
			}
			if s.Variadic {
				notes = append(notes, "variadic")
			}
			if s.NoGrad {
				notes = append(notes, "no grad")
			}
			name := s.Name
			if s.Numbered {
				name += "0, " + s.Name + "1, ..."
				notes = append(notes, "numbered: one slot per position")
			}
			rs = append(rs, []string{name, strings.Join(notes, ", ")})
		}
		rows(rs)
	}
	if len(d.Attrs) == 0 {
		line("attrs", "none")
	} else {
		line("attrs", "")
		var rs [][]string
		for _, a := range d.Attrs {
			def := "no default"
			if a.Default != nil {
				def = "default " + ops.ValueString(a.Default)
			}
			if a.Allowed != nil {
				vs := make([]string, len(a.Allowed))
				for i, v := range a.Allowed {
					vs[i] = ops.ValueString(v)
				}
				def += "; one of " + strings.Join(vs, ", ")
			}
			rs = append(rs, []string{a.Name, a.Type.String(), def})
		}
		rows(rs)
	}
	line("traits", d.Traits.String())
	if len(d.LinearIn) > 0 {
		line("linear", "in "+strings.Join(d.LinearIn, ", ")+": one of them partial, the others whole, gives Out partial alike")
	}
	if c := d.Cost; c != nil {
		line("traffic", costString(c))
	}
	line("shape", dash(d.Shape))
	switch g := d.GradType(); {
	case g == "":
		line("grad", "-")
	case ops.Lookup(g) != nil:
		line("grad", g+": "+ops.Lookup(g).Signature())
	default:
		line("grad", g+" (undefined)")
	}
	if of := ops.GradOf(d.Type); of != nil {
		line("grad of", strings.Join(of, ", "))
	}
	line("kernel", yes(f.kernel(d.Type)))
	if c := f.impls[d.Type]; c != nil {
		line("impls", "")
		var rs [][]string
		for i, im := range c.Impls {
			rs = append(rs, []string{c.Type + ":" + strconv.Itoa(i), im.Name, im.Doc})
		}
		rows(rs)
	} else {
		line("impls", "- (default:0 and elementwise:0 lower any op)")
	}
	// The rule as it prints itself (generated from the builder), and the
	// prose of why, with the Paddle rule it follows.
	switch r := d.Rule(); {
	case r != nil:
		line("rule", r.String())
	case d.Sharding != nil:
		line("rule", "- (no sample op of the type builds it; see why)")
	default:
		line("rule", "-")
	}
	if d.ShardingDoc != "" {
		line("why", d.ShardingDoc)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// The JSON document of -json; the schema is in ops's help.
type (
	opJSON struct {
		Type     string     `json:"type"`
		Doc      string     `json:"doc"`
		Inputs   []slotJSON `json:"inputs"`
		Outputs  []slotJSON `json:"outputs"`
		Attrs    []attrJSON `json:"attrs"`
		Traits   []string   `json:"traits"`
		Shape    string     `json:"shape"`
		Grad     string     `json:"grad"`
		GradOf   []string   `json:"grad_of"`
		Kernel   bool       `json:"kernel"`
		Impls    []implJSON `json:"impls"`
		Rule     string     `json:"rule"`
		Sharding string     `json:"sharding"`
	}
	slotJSON struct {
		Name     string `json:"name"`
		Optional bool   `json:"optional"`
		Variadic bool   `json:"variadic"`
		NoGrad   bool   `json:"no_grad"`
		Numbered bool   `json:"numbered"`
	}
	attrJSON struct {
		Name    string `json:"name"`
		Kind    string `json:"kind"`
		Default any    `json:"default"`
		Allowed []any  `json:"allowed"`
	}
	implJSON struct {
		Ref  string `json:"ref"`
		Name string `json:"name"`
		Doc  string `json:"doc"`
	}
)

func writeOpsJSON(w io.Writer, defs []*ops.Def, f *opFacts) error {
	doc := make([]opJSON, 0, len(defs))
	for _, d := range defs {
		o := opJSON{Type: d.Type, Doc: d.Doc, Inputs: slotsJSON(d.Inputs), Outputs: slotsJSON(d.Outputs),
			Attrs: []attrJSON{}, Traits: []string{}, Shape: d.Shape, Grad: d.GradType(),
			GradOf: ops.GradOf(d.Type), Kernel: f.kernel(d.Type), Impls: []implJSON{}, Sharding: d.ShardingDoc}
		if r := d.Rule(); r != nil {
			o.Rule = r.String()
		}
		if o.GradOf == nil {
			o.GradOf = []string{}
		}
		for _, a := range d.Attrs {
			aj := attrJSON{Name: a.Name, Kind: a.Type.String(), Allowed: []any{}}
			if a.Default != nil {
				aj.Default = jsonValue(a.Default)
			}
			for _, v := range a.Allowed {
				aj.Allowed = append(aj.Allowed, jsonValue(v))
			}
			o.Attrs = append(o.Attrs, aj)
		}
		if d.Traits != 0 {
			o.Traits = strings.Split(d.Traits.String(), "|")
		}
		if c := f.impls[d.Type]; c != nil {
			for i, im := range c.Impls {
				o.Impls = append(o.Impls, implJSON{Ref: c.Type + ":" + strconv.Itoa(i), Name: im.Name, Doc: im.Doc})
			}
		}
		doc = append(doc, o)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func slotsJSON(ss []ops.Slot) []slotJSON {
	out := make([]slotJSON, len(ss))
	for i, s := range ss {
		out[i] = slotJSON{Name: s.Name, Optional: s.Optional, Variadic: s.Variadic, NoGrad: s.NoGrad, Numbered: s.Numbered}
	}
	return out
}

// jsonValue returns v as a value encoding/json writes: numbers, strings,
// bools and their lists as themselves, anything else (a non-finite float,
// a block or var ref, a scalar) as its .dpir text.
func jsonValue(v ir.Value) any {
	finite := func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
	switch x := v.(type) {
	case ir.Bool:
		return bool(x)
	case ir.Int:
		return int64(x)
	case ir.Long:
		return int64(x)
	case ir.String:
		return string(x)
	case ir.Float:
		if finite(float64(x)) {
			return float64(x)
		}
	case ir.Float64:
		if finite(float64(x)) {
			return float64(x)
		}
	case ir.Bools:
		return append([]bool{}, x...) // never null: null is "no default"
	case ir.Ints:
		return append([]int64{}, x...) // never null: null is "no default"
	case ir.Longs:
		return append([]int64{}, x...) // never null: null is "no default"
	case ir.Strings:
		return append([]string{}, x...) // never null: null is "no default"
	case ir.Floats:
		if !slices.ContainsFunc(x, func(f float64) bool { return !finite(f) }) {
			return append([]float64{}, x...)
		}
	case ir.Float64s:
		if !slices.ContainsFunc(x, func(f float64) bool { return !finite(f) }) {
			return append([]float64{}, x...)
		}
	}
	return ops.ValueString(v)
}

// unknownOpType says that t is not a defined op type, naming the nearest
// defined ones (by edit distance) when some are near.
func unknownOpType(t string) string {
	type cand struct {
		name string
		dist int
	}
	limit := max(2, len(t)/3)
	var cs []cand
	for _, d := range ops.All() {
		if k := suggest.Distance(t, d.Type); k <= limit {
			cs = append(cs, cand{d.Type, k})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.name, b.name)
	})
	msg := "unknown op type " + strconv.Quote(t)
	if len(cs) == 0 {
		return msg + " ('distpass ops' lists them)"
	}
	names := make([]string, 0, 3)
	for _, c := range cs[:min(len(cs), 3)] {
		names = append(names, c.name)
	}
	return msg + "; nearest: " + strings.Join(names, ", ")
}

// costString spells a collective's traffic on one rank (ops.Cost), n
// its group's size.
func costString(c *ops.Cost) string {
	payload := "size(X)"
	if c.OfOutput {
		payload = "size(Out)"
	}
	switch {
	case c.None:
		return "0 (local)"
	case c.Whole && c.Sliced:
		return payload + " / num"
	case c.Whole:
		return payload
	case c.Ring == 1:
		return "(n-1)/n × " + payload
	}
	return fmt.Sprintf("%d(n-1)/n × %s", c.Ring, payload)
}
