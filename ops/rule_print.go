package ops

import (
	"slices"
	"strconv"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/spmd"
)

// A def's rule, printed: the builders are rank-polymorphic code, so what
// they build for one op is all that can print. Rule instantiates the
// rule on sample ops of the def built from its slots and attr defaults,
// at consecutive ranks, and folds the leading dims that vary with the
// rank into the notation's "...".

// PrintedRule is a def's rule in the notation, generated from the rule.
type PrintedRule struct {
	spmd.Notation
	// Attrs are the attrs the rule read, with the values it was printed
	// for, as "name = value": the defaults, and for an ints attr without
	// one the sample's (RuleSample).
	Attrs []string
	// Instance, when the leading dims do not fold (the rule is for one
	// rank, or its attrs pin dims from the front), names the sample the
	// notation is of ("4-D Input"); "" when folded.
	Instance string
	// Rank and Square are the first sample's (RuleSample's arguments):
	// the notation spells the samples from it on when folded, that one
	// when an instance.
	Rank   int
	Square bool
}

// String spells the rule and what it was printed for: "(X: ...A) ->
// (Out: ...A) strict  [axis = -1]".
func (p *PrintedRule) String() string {
	s := p.Notation.String()
	var at []string
	if p.Instance != "" {
		at = append(at, "for "+p.Instance)
	}
	if len(p.Attrs) > 0 {
		at = append(at, strings.Join(p.Attrs, ", "))
	}
	if len(at) > 0 {
		s += "  [" + strings.Join(at, "; ") + "]"
	}
	return s
}

// RuleSample is an op of a def's type built to print its rule, with the
// vars of its args.
type RuleSample struct {
	Op   *ir.Op
	Vars map[string]*ir.Var
}

// Lookup finds a var of the sample.
func (s *RuleSample) Lookup(name string) *ir.Var { return s.Vars[name] }

// Args returns the sample's input and output args as Notation sees them.
func (s *RuleSample) Args() (in, out []spmd.Arg) {
	side := func(ss []ir.Slot) []spmd.Arg {
		var as []spmd.Arg
		for _, sl := range ss {
			for _, a := range sl.Args {
				arg := spmd.Arg{Slot: sl.Name}
				if v := s.Vars[a]; v != nil && v.Type.IsTensor() {
					arg.Shape = v.Type.Shape
					if arg.Shape == nil {
						arg.Shape = []int64{}
					}
				}
				as = append(as, arg)
			}
		}
		return as
	}
	return side(s.Op.Inputs), side(s.Op.Outputs)
}

// Rule returns d's rule printed, generated from the rule on sample ops;
// nil when d has no rule or no sample builds one.
func (d *Def) Rule() *PrintedRule {
	if d.Sharding == nil {
		return nil
	}
	type printed struct {
		s     *RuleSample
		n     spmd.Notation
		attrs []string
		ok    bool
	}
	memo := map[[2]int]*printed{}
	at := func(r int, square bool) *printed {
		k := [2]int{r, 0}
		if square {
			k[1] = 1
		}
		if memo[k] == nil {
			p := &printed{}
			p.s, p.n, p.attrs, p.ok = d.printSample(r, square)
			memo[k] = p
		}
		return memo[k]
	}
	// The lowest rank whose rule folds with the next rank's, and whose
	// fold spells the rank after that: a fold that only two ranks agree
	// on may be a coincidence (a reduced dim 0).
	for r := range 5 {
		for _, square := range []bool{false, true} {
			a, b, c := at(r, square), at(r+1, square), at(r+2, square)
			if !a.ok || !b.ok || !c.ok {
				continue
			}
			if f := foldChecked(a.n, b.n, c.n, c.s); f != nil {
				return &PrintedRule{Notation: *f, Attrs: a.attrs, Rank: r, Square: square}
			}
		}
	}
	// No fold: an instance, at a middling rank where one builds.
	for _, r := range []int{2, 3, 1, 4, 0} {
		for _, square := range []bool{false, true} {
			a := at(r, square)
			if !a.ok {
				continue
			}
			p := &PrintedRule{Notation: a.n, Attrs: a.attrs, Rank: r, Square: square}
			if a.n.Form == "" && len(a.s.Op.Inputs) > 0 {
				p.Instance = instanceName(a.s)
				if f := d.of; f != nil {
					if fs := f.RuleSample(r, square); fs != nil {
						p.Instance = instanceName(fs) // a grad's, by its forward's
					}
				}
			}
			return p
		}
	}
	return nil
}

// instanceName names a sample by its first input's rank: "4-D Input".
func instanceName(s *RuleSample) string {
	for _, sl := range s.Op.Inputs {
		for _, a := range sl.Args {
			if v := s.Vars[a]; v != nil && v.Type.IsTensor() {
				return strconv.Itoa(len(v.Type.Shape)) + "-D " + sl.Name
			}
		}
	}
	return "the sample"
}

// foldChecked folds n1 and n2 (of consecutive ranks), and checks the fold
// against n3, the next rank's, of sample s3; nil when they do not fold.
func foldChecked(n1, n2, n3 spmd.Notation, s3 *RuleSample) *spmd.Notation {
	f, ok := foldNotations(n1, n2)
	if !ok {
		return nil
	}
	in, _ := s3.Args()
	e, err := f.Expand(func(slot string) int {
		for _, a := range in {
			if a.Slot == slot {
				return len(a.Shape)
			}
		}
		return -1
	})
	if err != nil || !sameUpToLetters(e, &n3) {
		return nil
	}
	return f
}

// foldNotations folds a (of some rank) and b (one more) into a's
// notation with "..." for the leading dims b adds: every slot of b is
// a's with one lowercase letter before, the same in all and in no other
// dim, or a's as it is; the other letters correspond one to one. The
// "..." also takes a's leading letters, from the left, while each is
// lowercase, the same in every slot that grew, and in no other dim.
func foldNotations(a, b spmd.Notation) (*spmd.Notation, bool) {
	if !sameWords(&a, &b) || len(a.In) != len(b.In) || len(a.Out) != len(b.Out) {
		return nil, false
	}
	if a.Form != "" {
		return &a, a.Form == b.Form
	}
	as := append(slices.Clone(a.In), a.Out...)
	bs := append(slices.Clone(b.In), b.Out...)
	var prefix string
	grown := make([]bool, len(as))
	toA := map[byte]byte{}
	fromA := map[byte]byte{}
	for i := range as {
		x, y := as[i].Dims, bs[i].Dims
		if as[i].Slot != bs[i].Slot || x == "*" != (y == "*") {
			return nil, false
		}
		switch len(y) - len(x) {
		case 0:
		case 1:
			if prefix == "" {
				prefix = y[:1]
			}
			if y[:1] != prefix || !spmd.IsSplittable(prefix[0]) {
				return nil, false
			}
			grown[i] = true
			y = y[1:]
		default:
			return nil, false
		}
		for k := range len(x) {
			p, q := x[k], y[k]
			if p == '1' || q == '1' || p == '*' {
				if p != q {
					return nil, false
				}
				continue
			}
			if spmd.IsWhole(p) != spmd.IsWhole(q) {
				return nil, false
			}
			if m, ok := toA[q]; ok && m != p {
				return nil, false
			}
			if m, ok := fromA[p]; ok && m != q {
				return nil, false
			}
			toA[q], fromA[p] = p, q
		}
	}
	if prefix == "" || toA[prefix[0]] != 0 {
		return nil, false
	}
	// a's leading letters that only grown slots have, in each of them at
	// the same place, are leading dims too: fold them, from the left.
	lead := 0
	for {
		var l byte
		ok := true
		for i, s := range as {
			if !grown[i] {
				continue
			}
			if lead >= len(s.Dims) || !spmd.IsSplittable(s.Dims[lead]) || l != 0 && s.Dims[lead] != l {
				ok = false
				break
			}
			l = s.Dims[lead]
		}
		if !ok || l == 0 {
			break
		}
		for i, s := range as {
			if !grown[i] && strings.IndexByte(s.Dims, l) >= 0 || grown[i] && strings.IndexByte(s.Dims[lead+1:], l) >= 0 {
				ok = false
			}
		}
		if !ok {
			break
		}
		lead++
	}
	f := a
	f.In, f.Out = slices.Clone(a.In), slices.Clone(a.Out)
	for i := range as {
		if !grown[i] {
			continue
		}
		if i < len(f.In) {
			f.In[i].Dims = spmd.Ellipsis + as[i].Dims[lead:]
		} else {
			f.Out[i-len(f.In)].Dims = spmd.Ellipsis + as[i].Dims[lead:]
		}
	}
	return &f, true
}

// sameWords reports whether a and b have the same words, note and form.
func sameWords(a, b *spmd.Notation) bool {
	return a.Reduce == b.Reduce && a.Strict == b.Strict && a.StrictBackward == b.StrictBackward &&
		a.NoPartial == b.NoPartial && len(a.Selects) == len(b.Selects) && a.Note == b.Note && a.Form == b.Form
}

// sameUpToLetters reports whether a and b spell the same rule but for
// the letters' names.
func sameUpToLetters(a, b *spmd.Notation) bool {
	if !sameWords(a, b) || len(a.In) != len(b.In) || len(a.Out) != len(b.Out) {
		return false
	}
	m, back := map[byte]byte{}, map[byte]byte{}
	for i, s := range append(slices.Clone(a.In), a.Out...) {
		t := b.In
		j := i
		if i >= len(a.In) {
			t, j = b.Out, i-len(a.In)
		}
		x, y := s.Dims, t[j].Dims
		if s.Slot != t[j].Slot || len(x) != len(y) {
			return false
		}
		for k := range len(x) {
			p, q := x[k], y[k]
			if spmd.IsSplittable(p) != spmd.IsSplittable(q) || spmd.IsWhole(p) != spmd.IsWhole(q) || !spmd.IsSplittable(p) && !spmd.IsWhole(p) && p != q {
				return false
			}
			if v, ok := m[p]; ok && v != q {
				return false
			}
			if v, ok := back[q]; ok && v != p {
				return false
			}
			m[p], back[q] = q, p
		}
	}
	return true
}

// printSample builds d's sample at rank r and the notation of its rule,
// with the attrs the rule read.
func (d *Def) printSample(r int, square bool) (*RuleSample, spmd.Notation, []string, bool) {
	s := d.RuleSample(r, square)
	if s == nil {
		return nil, spmd.Notation{}, nil, false
	}
	c := newInfer(d, s.Op, s.Lookup)
	if c == nil {
		return nil, spmd.Notation{}, nil, false
	}
	var read []string
	c.read = &read
	rule, err := d.Sharding(c)
	if err != nil || rule == nil {
		return nil, spmd.Notation{}, nil, false
	}
	in, out := s.Args()
	var attrs []string
	for _, a := range d.Attrs {
		switch v := s.Op.Attrs.Get(a.Name); {
		case !slices.Contains(read, a.Name):
		case v != nil:
			attrs = append(attrs, a.Name+" = "+ValueString(v))
		case a.Default != nil:
			attrs = append(attrs, a.Name+" = "+ValueString(a.Default))
		}
	}
	return s, rule.Notation(in, out), attrs, true
}

// RuleSample returns an op of d's type whose inputs have rank dims,
// built from d's slots and attr defaults, and inferred; nil when none
// infers. The required input slots take one arg (a variadic one two,
// or one where two do not infer), the grad-free ones int64, the others float32; the dims are 10, 11,
// ... or all 8 when square (a contraction's dims must agree). Where the
// inference names an input as wrong (the others first), that input
// tries in turn the first's shape but its last dim 1, without its last
// dim, [1], its channel dim, its first dim, [8, 8] and 8 before the
// first's dims (grouped_matmul's experts). A derived grad op's sample
// is its forward op's, each gradient of the forward var's type.
func (d *Def) RuleSample(rank int, square bool) *RuleSample {
	if d.of != nil {
		return d.gradSample(rank, square)
	}
	for _, perm := range []bool{false, true} {
		for _, variadic := range []int{2, 1} {
			if s := d.sample(rank, square, perm, variadic); s != nil {
				return s
			}
		}
	}
	return nil
}

// sample is RuleSample's for a def of its own, with variadic args a
// variadic slot (two show how a rule treats several: concat's aligned
// inputs; one where an attr counts them); with perm, an ints attr
// without a default gets the dims reversed: a permutation, and a list of
// dims (transpose2's axis).
func (d *Def) sample(rank int, square, perm bool, variadic int) *RuleSample {
	first := make([]int64, rank)
	for i := range first {
		first[i] = int64(10 + i)
		if square {
			first[i] = 8
		}
	}
	alts := [][]int64{first}
	if rank > 0 {
		alts = append(alts, append(slices.Clone(first[:rank-1]), 1), first[:rank-1])
	}
	alts = append(alts, []int64{1})
	if rank > 1 {
		alts = append(alts, []int64{first[1]})
	}
	if rank > 0 {
		alts = append(alts, []int64{first[0]})
	}
	alts = append(alts, []int64{8, 8}, append([]int64{8}, first...))

	s := &RuleSample{Op: &ir.Op{Type: d.Type}, Vars: map[string]*ir.Var{}}
	for _, a := range d.Attrs {
		if perm && a.Default == nil && (a.Type == ir.KindInts || a.Type == ir.KindLongs) {
			perm := make(ir.Ints, rank)
			for i := range perm {
				perm[i] = int64(rank - 1 - i)
			}
			s.Op.Attrs = append(s.Op.Attrs, ir.Attr{Name: a.Name, Value: perm})
		}
	}
	type input struct {
		slot, arg string
		dtype     ir.DType
		alt       int
	}
	var ins []*input
	for _, sl := range d.Inputs {
		if sl.Optional {
			continue
		}
		name, args := sampleArgs("in_", sl, variadic)
		for _, a := range args {
			dt := ir.F32
			if sl.NoGrad {
				dt = ir.I64
			}
			ins = append(ins, &input{slot: name, arg: a, dtype: dt})
		}
		s.Op.Inputs = append(s.Op.Inputs, ir.S(name, args...))
	}
	for _, sl := range d.Outputs {
		name, args := sampleArgs("out_", sl, variadic)
		s.Op.Outputs = append(s.Op.Outputs, ir.S(name, args...))
	}
	for range 8*len(ins) + 1 {
		for _, in := range ins {
			v := ir.Var{Type: ir.Tensor(in.dtype, slices.Clone(alts[in.alt])...)}.Named(in.arg)
			s.Vars[in.arg] = &v
		}
		if d.Infer == nil {
			return s
		}
		c := newInfer(d, s.Op, s.Lookup)
		err := d.Infer(c)
		if err == nil {
			for _, o := range s.Op.Outputs {
				for k, a := range o.Args {
					v := ir.Var{Type: ir.Type{Kind: ir.Raw}}.Named(a) // an output the inference leaves open: no dense tensor
					for _, res := range c.res {
						if res.slot == o.Name && res.i == k {
							v.Type = ir.Tensor(res.dtype, res.shape...)
						}
					}
					s.Vars[a] = &v
				}
			}
			return s
		}
		// The inference names the input it finds wrong: try its next
		// shape, the first input's last.
		moved := false
		for i := range ins {
			in := ins[(i+1)%len(ins)]
			if !strings.Contains(err.Error(), in.slot) || in.alt+1 >= len(alts) {
				continue
			}
			for _, same := range ins {
				if same.slot == in.slot {
					same.alt++
				}
			}
			moved = true
			break
		}
		if !moved {
			return nil
		}
	}
	return nil
}

// sampleArgs names a sample's args of slot sl: one, or variadic.
func sampleArgs(prefix string, sl Slot, variadic int) (string, []string) {
	name := sl.Name
	if sl.Numbered {
		name += "0"
	}
	n := 1
	if sl.Variadic {
		n = variadic
	}
	args := make([]string, n)
	for k := range args {
		args[k] = prefix + name + "_" + strconv.Itoa(k)
	}
	return name, args
}

// gradSample is a derived grad def's sample: the grad op append-backward
// makes of the forward sample, an output gradient of its output's type
// and an input gradient of its input's.
func (d *Def) gradSample(rank int, square bool) *RuleSample {
	f := d.of.RuleSample(rank, square)
	if f == nil {
		return nil
	}
	s := &RuleSample{Op: &ir.Op{Type: d.Type, Attrs: f.Op.Attrs}, Vars: map[string]*ir.Var{}}
	find := func(name string) []string {
		base, grad := strings.CutSuffix(name, "@GRAD")
		for _, ss := range [2][]ir.Slot{f.Op.Inputs, f.Op.Outputs} {
			for _, sl := range ss {
				if sl.Name != base {
					continue
				}
				var args []string
				for _, a := range sl.Args {
					n := a
					if grad {
						n = a + "@GRAD"
					}
					v := *f.Vars[a]
					v = v.Named(n)
					s.Vars[n] = &v
					args = append(args, n)
				}
				return args
			}
		}
		return nil
	}
	for _, sl := range d.Inputs {
		if args := find(sl.Name); len(args) > 0 {
			s.Op.Inputs = append(s.Op.Inputs, ir.S(sl.Name, args...))
		}
	}
	for _, sl := range d.Outputs {
		if args := find(sl.Name); len(args) > 0 {
			s.Op.Outputs = append(s.Op.Outputs, ir.S(sl.Name, args...))
		}
	}
	if len(s.Op.Inputs) == 0 {
		return nil
	}
	return s
}

// ShardingRule builds d's rule for op, whose arg vars lookup finds, as
// ShardingRuleOf does for an op of a type in the table.
func (d *Def) ShardingRule(op *ir.Op, lookup func(name string) *ir.Var) (spmd.ShardingRule, error) {
	return shardingRuleOf(d, op, lookup)
}
