package passes

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
)

// AppendBackwardPass differentiates a serial forward program: it appends
// the backward ops of a loss to block 0 of the main program.
func AppendBackwardPass() *Pass {
	return &Pass{
		Name: "append-backward",
		Doc: `append the backward ops of a loss (autodiff)
append-backward{loss=NAME} differentiates NAME, a float var of block 0 of
the main program defined by a forward op, which becomes forward|loss. A
var gets a gradient when the loss depends on it through ops with a grad
maker and it is a float tensor that is a trainable param, or any other var
without stop_gradient. The pass appends fill_constant (the loss gradient,
ones, role backward|loss), then the grad op of each forward op on the loss
path in reverse order (role backward, fwd = the forward op, its attrs
copied). Gradients are named x@GRAD; a var read by several ops gets parts
x@GRAD@RENAME@0, @1, ... summed into x@GRAD by a sum op placed before the
first grad op that reads it (or at the end). Grad vars copy the forward
var's type and its mesh and dims_mapping (not its partial dims); a grad op
of an annotated forward op gets the same mesh and impl (but that of a
rule-based spmd:0 op, which complete gives its rule's dist). Every trainable
param that received a gradient is added to the params-grads list, in
declaration order. An output the loss does not depend on, beside one it
does (a split's), gets zeros (fill_any_like, value 0) for its gradient.
An op on the loss path without a grad maker, or owning a sub-block, is an
error. Counts grad-ops and sum-ops, and zero-ops when there are any.`,
		Options: []Option{{Name: "loss", Kind: OptString, Default: "", Doc: "the var to differentiate (required)"}},
		Run: func(ctx *Context, m *ir.Module) error {
			st, err := AppendBackward(m, ctx.String("loss"))
			if err != nil {
				return err
			}
			ctx.Count("grad-ops", st.GradOps)
			ctx.Count("sum-ops", st.SumOps)
			if st.ZeroOps > 0 {
				ctx.Count("zero-ops", st.ZeroOps)
			}
			return nil
		},
	}
}

// BackwardStats counts what AppendBackward emitted.
type BackwardStats struct {
	GradOps int // grad ops of forward ops (not the seed, not the sums)
	SumOps  int // sum ops that add up the parts of a gradient
	ZeroOps int // fill_any_like ops, the zero gradients of outputs the loss does not read
}

// GradName is the name of the gradient of var v: v@GRAD.
func GradName(v string) string { return v + "@GRAD" }

// gradPartName is the name of part k of v's gradient: v@GRAD@RENAME@k.
func gradPartName(v string, k int) string { return v + "@GRAD@RENAME@" + strconv.Itoa(k) }

// AppendBackward appends to block 0 of m's main program the backward ops
// of loss, as the append-backward pass does, and fills m.ParamGrads.
// Every error is found before m is changed, so on error m is as it was.
func AppendBackward(m *ir.Module, loss string) (BackwardStats, error) {
	if loss == "" {
		return BackwardStats{}, errors.New("option loss is required: append-backward{loss=NAME}")
	}
	if m.Main == nil || len(m.Main.Blocks) == 0 {
		return BackwardStats{}, errors.New("module has no main program")
	}
	bw := &backward{
		m: m, b: m.Main.Global(), makers: gradMakers(),
	}
	n := m.Main.Global().NumVars()
	bw.vars = make(map[string]*varState, n)
	bw.order = make([]string, 0, n)
	bw.slab = make([]varState, 0, n)
	if err := bw.analyse(loss); err != nil {
		return BackwardStats{}, err
	}
	if err := bw.emit(loss); err != nil {
		return bw.stats, err
	}
	bw.fillParamGrads()
	return bw.stats, nil
}

type backward struct {
	m      *ir.Module
	b      *ir.Block
	makers map[string]*gradMaker

	lossAt int                  // index of the loss op in b.Ops
	vars   map[string]*varState // by var name
	order  []string             // the names of vars, in the order st first saw them
	slab   []varState           // backing store of vars' states
	path   []int                // ops on the loss path, in reverse order
	multi  []string             // vars of several parts, in order of their first part
	stats  BackwardStats
}

// varState is what append-backward knows of one var.
type varState struct {
	known   bool     // live is decided
	live    bool     // a gradient can reach, through it, a var that qualifies
	defined bool     // written by an op up to the loss op
	needs   bool     // the loss depends on it and it takes a gradient
	parts   int      // number of gradient parts it receives
	got     []string // the parts emitted so far
	final   string   // the complete gradient, once it exists
}

// st returns the state of var a, creating it.
func (bw *backward) st(a string) *varState {
	if s := bw.vars[a]; s != nil {
		return s
	}
	var s *varState
	if len(bw.slab) < cap(bw.slab) {
		bw.slab = bw.slab[:len(bw.slab)+1]
		s = &bw.slab[len(bw.slab)-1]
	} else {
		s = new(varState)
	}
	bw.vars[a] = s
	bw.order = append(bw.order, a)
	return s
}

// qualifies reports whether v may have a gradient at all.
func qualifies(v *ir.Var) bool {
	if v == nil || !v.Type.IsTensor() || !v.Type.DType.IsFloat() {
		return false
	}
	if v.Kind == ir.KindParam {
		return v.Has(ir.FlagTrainable)
	}
	return !v.Has(ir.FlagStopGradient)
}

// isLive reports whether a gradient can flow into arg a as read by the
// op being visited: a var an earlier op defined is live when that op made
// it so, any other var when it qualifies.
func (bw *backward) isLive(a string) bool {
	s := bw.st(a)
	if !s.known {
		s.known = true
		s.live = !s.defined && qualifies(bw.b.Var(a))
	}
	return s.live
}

func (bw *backward) analyse(loss string) error {
	b := bw.b
	lv := b.Var(loss)
	if lv == nil {
		return fmt.Errorf("loss var %s is not declared in block 0 of the main program", strconv.Quote(loss))
	}
	if !lv.Type.IsTensor() || !lv.Type.DType.IsFloat() {
		return fmt.Errorf("loss var %s is %s, not a float tensor", strconv.Quote(loss), lv.Type)
	}
	if b.Var(GradName(loss)) != nil {
		return fmt.Errorf("var %s is already declared: the module has a backward pass", strconv.Quote(GradName(loss)))
	}
	bw.lossAt = -1
	for i, op := range b.Ops {
		if op.Role.IsBackward() {
			return fmt.Errorf("%s already has role %s: append-backward runs on a forward program", op, op.Role)
		}
		if bw.lossAt < 0 && slices.ContainsFunc(op.Outputs, func(s ir.Slot) bool { return slices.Contains(s.Args, loss) }) {
			bw.lossAt = i
		}
	}
	if bw.lossAt < 0 {
		return fmt.Errorf("no op of block 0 defines loss var %s", strconv.Quote(loss))
	}
	lop := b.Ops[bw.lossAt]
	if !lop.Role.IsForward() {
		return fmt.Errorf("loss var %s is defined by %s, whose role %s is not forward", strconv.Quote(loss), lop, lop.Role)
	}

	// Forward: which vars a gradient can flow through.
	for _, op := range b.Ops[:bw.lossAt+1] {
		if !op.Role.IsForward() {
			for a := range op.OutputNames {
				s := bw.st(a)
				s.defined, s.known, s.live = true, true, false
			}
			continue
		}
		mk := bw.makers[op.Type]
		anyLive := false
		for _, s := range op.Inputs {
			if mk != nil && !mk.isDiffInput(s.Name) {
				continue
			}
			for _, a := range s.Args {
				if bw.isLive(a) {
					anyLive = true
				}
			}
		}
		for _, s := range op.Outputs {
			diff := mk == nil || slices.Contains(mk.outs, s.Name)
			for _, a := range s.Args {
				s := bw.st(a)
				s.defined, s.known = true, true
				s.live = anyLive && diff && qualifies(b.Var(a))
			}
		}
	}
	if !bw.st(loss).live {
		return fmt.Errorf("loss var %s depends on no var that takes a gradient (a trainable param, or a float var without stop_gradient)", strconv.Quote(loss))
	}

	// Backward: the ops on the loss path and the parts of each gradient.
	bw.st(loss).needs = true
	for i := bw.lossAt; i >= 0; i-- {
		op := b.Ops[i]
		if !op.Role.IsForward() {
			continue
		}
		hit := ""
		for a := range op.OutputNames {
			if s := bw.vars[a]; s != nil && s.needs {
				hit = a
				break
			}
		}
		if hit == "" {
			continue
		}
		mk := bw.makers[op.Type]
		if mk == nil {
			return fmt.Errorf("%s: no gradient defined, and loss %s depends on its output %s", op, strconv.Quote(loss), strconv.Quote(hit))
		}
		for range op.SubBlocks {
			return fmt.Errorf("%s owns a sub-block: append-backward differentiates block 0 only", op)
		}
		if mk.Unsupported != nil {
			if why := mk.Unsupported(op); why != "" {
				return fmt.Errorf("%s: %s", op, why)
			}
		}
		for _, s := range op.Inputs {
			if !mk.isDiffInput(s.Name) {
				continue
			}
			for _, a := range s.Args {
				s := bw.vars[a]
				if s == nil || !s.live {
					continue
				}
				for o := range op.OutputNames {
					if o == a {
						return fmt.Errorf("%s updates %s in place: append-backward needs each var defined once", op, strconv.Quote(a))
					}
				}
				s.needs = true
				s.parts++
			}
		}
		bw.path = append(bw.path, i)
	}
	// Every name the gradients will take must be free. The vars are
	// visited in the order they were met (program order), not the map's,
	// so that of several taken names the error names the same one on
	// every run.
	for _, a := range bw.order {
		s := bw.vars[a]
		if !s.needs {
			continue
		}
		for k := -1; k < s.parts && (k < 0 || s.parts > 1); k++ {
			n := GradName(a)
			if k >= 0 {
				n = gradPartName(a, k)
			}
			if b.Var(n) != nil {
				return fmt.Errorf("var %s is already declared: it would hold a gradient of %s", strconv.Quote(n), strconv.Quote(a))
			}
		}
	}
	if lop.Role == ir.RoleForward {
		lop.Role = ir.RoleLoss
	}
	return nil
}

// declare adds the gradient var name of forward var v to block 0.
func (bw *backward) declare(name string, v *ir.Var) error {
	gv := new(ir.Var)
	*gv = ir.Var{Kind: ir.KindVar, Type: v.Type}.Named(name)
	gv.Type.Shape = slices.Clone(v.Type.Shape)
	if v.Dist != nil {
		gv.Dist = &ir.TensorDist{Mesh: v.Dist.Mesh, DimsMapping: slices.Clone(v.Dist.DimsMapping)}
	}
	if err := bw.b.AddVar(gv); err != nil {
		return fmt.Errorf("gradient of %s: %w", strconv.Quote(v.Name()), err)
	}
	return nil
}

// annotate gives op an OpDist on mesh with impl, taking each argument's
// dims_mapping from its var; arguments without a dist are left out.
func (bw *backward) annotate(op *ir.Op, mesh, impl string, index int) {
	d := &ir.OpDist{Mesh: mesh, ImplType: impl, ImplIndex: index}
	fill := func(ss []ir.Slot) []ir.ArgDist {
		var out []ir.ArgDist
		for _, s := range ss {
			for _, a := range s.Args {
				if v := bw.b.Var(a); v != nil && v.Dist != nil {
					out = append(out, ir.ArgDist{Name: a, DimsMapping: slices.Clone(v.Dist.DimsMapping)})
				}
			}
		}
		return out
	}
	d.Inputs = fill(op.Inputs)
	d.Outputs = fill(op.Outputs)
	op.Dist = d
}

// push appends op to block 0 with a fresh id and role.
func (bw *backward) push(op *ir.Op, role ir.Role) {
	op.ID = bw.m.FreshOpID()
	op.Role = role
	bw.b.Ops = append(bw.b.Ops, op)
}

// gradOf returns the complete gradient of a, summing its parts first when
// it has several.
func (bw *backward) gradOf(a string) (string, error) {
	s := bw.st(a)
	if s.final != "" {
		return s.final, nil
	}
	if !s.needs { // an output beside one the loss depends on (a split's)
		return bw.zerosFor(a, s)
	}
	ps := s.got
	if len(ps) == 0 || len(ps) != s.parts {
		return "", fmt.Errorf("internal error: gradient of %s read with %d of %d parts", strconv.Quote(a), len(ps), s.parts)
	}
	v := bw.b.Var(a)
	g := GradName(a)
	if err := bw.declare(g, v); err != nil {
		return "", err
	}
	op := &ir.Op{Type: "sum", Inputs: []ir.Slot{ir.S("X", ps...)}, Outputs: ir.Slots("Out", g)}
	if v.Dist != nil {
		bw.annotate(op, v.Dist.Mesh, "default", 0)
	}
	bw.push(op, ir.RoleBackward)
	s.final = g
	bw.stats.SumOps++
	return g, nil
}

// zerosFor declares a's gradient as zeros of a's shape, as Paddle's
// backward fills the gradient of an output no gradient reaches.
func (bw *backward) zerosFor(a string, s *varState) (string, error) {
	v := bw.b.Var(a)
	g := GradName(a)
	if err := bw.declare(g, v); err != nil {
		return "", err
	}
	op := &ir.Op{Type: "fill_any_like", Inputs: ir.Slots("X", a), Outputs: ir.Slots("Out", g)}
	op.Attrs.Set("dtype", ir.Int(-1))
	op.Attrs.Set("value", ir.Float(0))
	if v.Dist != nil {
		bw.annotate(op, v.Dist.Mesh, "default", 0)
	}
	bw.push(op, ir.RoleBackward)
	s.final = g
	bw.stats.ZeroOps++
	return g, nil
}

// partFor names and declares// partFor names and declares the gradient part forward input a receives
// at the op being differentiated.
func (bw *backward) partFor(a string) (string, error) {
	s := bw.vars[a]
	k := len(s.got)
	name := GradName(a)
	if s.parts > 1 {
		name = gradPartName(a, k)
		if k == 0 {
			bw.multi = append(bw.multi, a)
		}
	}
	if err := bw.declare(name, bw.b.Var(a)); err != nil {
		return "", err
	}
	if s.parts == 1 {
		s.final = name
	} else {
		s.got = append(s.got, name)
	}
	return name, nil
}

func (bw *backward) emit(loss string) error {
	b := bw.b
	lv := b.Var(loss)
	lg := GradName(loss)
	if err := bw.declare(lg, lv); err != nil {
		return err
	}
	var seed *ir.Op
	if n, known := lv.Type.Numel(); known && n >= 0 {
		code, _ := lv.Type.DType.PaddleCode()
		seed = &ir.Op{Type: "fill_constant", Outputs: ir.Slots("Out", lg)}
		seed.Attrs.Set("dtype", ir.Int(code))
		seed.Attrs.Set("shape", ir.Ints(slices.Clone(lv.Type.Shape)))
		seed.Attrs.Set("value", ir.Float(1))
	} else { // unknown dims: ones shaped like the loss at run time
		seed = &ir.Op{Type: "fill_any_like", Inputs: ir.Slots("X", loss), Outputs: ir.Slots("Out", lg)}
		seed.Attrs.Set("dtype", ir.Int(-1))
		seed.Attrs.Set("value", ir.Float(1))
	}
	if lv.Dist != nil {
		bw.annotate(seed, lv.Dist.Mesh, "default", 0)
	}
	bw.push(seed, ir.RoleBackward|ir.RoleLoss)
	bw.st(loss).final = lg

	lookup := b.Var
	var perr error
	inGrad := func(_ string, _ int, a string) string {
		if s := bw.vars[a]; s == nil || !s.live || perr != nil {
			return ""
		}
		g, err := bw.partFor(a)
		if err != nil {
			perr = err
		}
		return g
	}
	// A grad no one reads, of an arg beside others that need theirs:
	// named apart from any gradient (GradName), so that nothing takes it
	// for one.
	unused := func(a string) (string, error) {
		name := GradName(a) + "@UNUSED"
		for k := 1; b.Var(name) != nil; k++ {
			name = GradName(a) + "@UNUSED@" + strconv.Itoa(k)
		}
		return name, bw.declare(name, b.Var(a))
	}
	for _, i := range bw.path {
		fwd := b.Ops[i]
		op, err := bw.makers[fwd.Type].make(fwd, lookup, bw.gradOf, inGrad, unused)
		if err == nil {
			err = perr
		}
		if err != nil {
			return err
		}
		if fwd.Dist != nil && fwd.Dist.ImplType != lower.SPMDType {
			// A rule-based op's grad op runs its own rule, its grads
			// partial as the rule says: complete gives it its dist.
			bw.annotate(op, fwd.Dist.Mesh, fwd.Dist.ImplType, fwd.Dist.ImplIndex)
		}
		bw.push(op, ir.RoleBackward)
		bw.stats.GradOps++
	}
	for _, a := range bw.multi {
		if _, err := bw.gradOf(a); err != nil {
			return err
		}
	}
	return nil
}

// fillParamGrads lists every trainable param that received a gradient, in
// declaration order, updating an entry the list already has for it.
func (bw *backward) fillParamGrads() {
	at := make(map[string]int, len(bw.m.ParamGrads))
	for i, pg := range bw.m.ParamGrads {
		at[pg.Param] = i
	}
	for _, v := range bw.b.Vars() {
		if v.Kind != ir.KindParam || !v.Has(ir.FlagTrainable) {
			continue
		}
		s := bw.vars[v.Name()]
		if s == nil || s.final == "" {
			continue
		}
		g := s.final
		if i, ok := at[v.Name()]; ok {
			bw.m.ParamGrads[i].Grad = g
			continue
		}
		bw.m.ParamGrads = append(bw.m.ParamGrads, ir.ParamGrad{Param: v.Name(), Grad: g})
	}
}
