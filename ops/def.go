package ops

import (
	"fmt"
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/spmd"
)

// Def defines one op type: its slots and attrs as Paddle names them, how
// its outputs' types follow from its inputs and attrs, what kind of op it
// is, and how it is differentiated.
type Def struct {
	// Type is the op type, as in the IR ("matmul_v2").
	Type string
	// Family is the op's family, the file that defines it ("matmul");
	// the table sets it, and a grad def has its forward's.
	Family string
	// Doc says in one line what the op computes.
	Doc string
	// Inputs and Outputs list the slots, in Paddle's order.
	Inputs, Outputs []Slot
	// Attrs lists the attrs the op's semantics read. An attr the op
	// carries that is not listed (Paddle's op_callstack, a fused kernel's
	// mkldnn flags) is accepted unchecked.
	Attrs []Attr
	// Traits says whether the op is elementwise, a reduction, a view.
	Traits Traits
	// Shape states the shape rule in one line ("Out = X"); empty when the
	// op has no inference.
	Shape string
	// Infer, when set, sets the output types the op's inputs and attrs
	// determine. An output it does not set is not checked (a shape only
	// data determines: MoE's dispatched rows). An error means the inputs
	// themselves are inconsistent (a contraction of 3 against 4).
	Infer func(c *Infer) error
	// Grad says how to differentiate the op; nil when it has no gradient.
	Grad *Grad
	// Sharding, when set, builds the op's sharding rule from its inputs'
	// types and attrs (the letters depend on ranks and transposes); nil
	// when the op has no rule (completion treats it as replicated).
	Sharding func(c *Infer) (spmd.ShardingRule, error)
	// ShardingDoc says why in one line, beside the rule as it prints
	// itself (Rule): the Paddle rule it follows, and what the printed
	// form does not say.
	ShardingDoc string
	// LinearIn lists the input slots the op is linear in while its other
	// inputs are whole (the matmuls' and elementwise_mul's X and Y,
	// elementwise_div's X): one partial input among them, a sum or an
	// average, gives Out partial alike.
	LinearIn []string
	// PartialIf, when set, is the condition on an op's attrs under which
	// its traits and LinearIn about partial values hold (scale without a
	// bias; leaky_relu with alpha >= 0).
	PartialIf func(op *ir.Op) bool
	// Indexing, for an op that reads or writes rows at positions held in
	// an input (gather, scatter), says which slots; nil for other ops.
	Indexing *Indexing
	// Cost is what one rank of a collective moves (explain and check's
	// traffic read it); nil for an op that is not one.
	Cost *Cost
	// NoRule says why an op that is not a collective has no sharding
	// rule (a stream sync, which only partitioned programs hold); the
	// table's check (sim.CheckTable) holds every other op to having one.
	NoRule string
	// Check, when set, checks what an op of the type needs beyond its
	// slots, attrs and types (a reshard's dists), reporting each problem
	// with the var it is about. Verify calls it once the inputs resolve.
	Check func(c *Infer, report func(varName, msg string))
	// Newer, for a collective Paddle's newer dialect spells otherwise, is
	// that spelling (passes' collective-dialect writes it); nil when the
	// op keeps its name.
	Newer *Newer

	// of is the forward def of a grad def derived from Grad, nil otherwise.
	of *Def
}

// Forward returns the def of the op whose grad d is, when d was derived
// from that op's Grad; nil otherwise.
func (d *Def) Forward() *Def { return d.of }

// Slot is one input or output slot.
type Slot struct {
	Name string
	// Optional slots may be absent or empty; a required slot has at
	// least one arg.
	Optional bool
	// Variadic slots take any number of args (sum's X); others at most one.
	Variadic bool
	// Numbered slots stand for Name0, Name1, ... in order, one arg each
	// and as many as the op has: PIR's positional operands and results,
	// which the importer names in0, out0 (cf.yield's).
	Numbered bool
	// NoGrad marks an input no gradient flows into (an index, a label, a
	// count), for the completion's and autodiff's benefit.
	NoGrad bool
}

// Attr is one attr of an op type.
type Attr struct {
	Name string
	// Type is the attr's kind. An int attr also accepts a long, a float a
	// float64, ints longs, floats float64s, a bool an int, as Paddle's
	// attr loader does: Paddle wrote fill_constant's shape as ints before
	// 2.0 and as longs after, and is_test as an int in older programs.
	Type ir.AttrKind
	// Default is the value an op without the attr has; nil when the attr
	// has no default (its absence means "not given": ScaleTensor instead).
	Default ir.Value
	// Allowed, when set, lists the values a string or int attr may take.
	Allowed []ir.Value
	// DType marks an attr that names a dtype: an int one by Paddle's
	// VarType code (cast's out_dtype), a string one by PIR's name
	// (pd_op.full's "float32"). AttrDType and DTypeValue read and write
	// such values.
	DType bool
}

// Indexing is how an op indexes rows by positions: Index is the input
// slot holding them; RowsIn and RowsOut the input and output slots whose
// indexed dim they point into (dim 0, or the one attr Axis names). By
// rank-local positions (local [d]) those dims must be split along d as
// the positions' source rows are.
type Indexing struct {
	Index           string
	RowsIn, RowsOut []string
	Axis            string
}

// Cost is a collective's traffic on one rank: Ring × (n−1)/n of its
// payload (a ring algorithm over a group of n), the whole payload (Whole:
// point to point), or nothing (None: a local copy or split, a barrier).
// The payload is the input's bytes, or the output's where OfOutput;
// Sliced ops move one of their num attr's slices of it.
type Cost struct {
	Ring     int64
	OfOutput bool
	Whole    bool
	None     bool
	Sliced   bool
}

// Newer is how Paddle's newer dialect spells a collective: its type, with
// X and Out spelled x and out, and for a reduction its reduce_type code
// (ReduceTypeCode; -1: none).
type Newer struct {
	Type       string
	ReduceType int
}

// ReduceTypes are Paddle's ReduceType names by code: the reduce_type attr
// of all_reduce and reduce_scatter.
var ReduceTypes = [...]string{"sum", "max", "min", "prod", "avg"}

// ReduceTypeName returns the name of reduce_type code, or false.
func ReduceTypeName(code int64) (string, bool) {
	if code < 0 || code >= int64(len(ReduceTypes)) {
		return "", false
	}
	return ReduceTypes[code], true
}

// Traits classify an op for the analyses that reason about many op types
// at once.
type Traits uint32

const (
	// Elementwise ops compute each output element from the input
	// elements at the same (broadcast) index.
	Elementwise Traits = 1 << iota
	// Reduction ops fold some dims of their input.
	Reduction
	// View ops move or relabel elements without computing on them
	// (reshape, transpose, squeeze).
	View
	// Collective ops communicate between ranks.
	Collective
	// Random ops draw from a random source.
	Random
	// ControlFlow ops run sub-blocks.
	ControlFlow
	// SideEffects ops act beyond the values they write (I/O with the
	// caller, checks): dead-code elimination keeps them.
	SideEffects
	// ShapeOfOut ops state Out's shape in their shape attr (the fills):
	// a lowering makes it the local shape.
	ShapeOfOut
	// BackwardOnly ops belong to the backward with no forward op of their
	// own (the AMP checks): their own impl's Backward lowers them.
	BackwardOnly
	// OwnPart ops read a rank's own part of a partial value as what it is
	// (each rank's token counts, for the MoE exchanges and the position
	// and capacity ops), not as the whole value: no reshard before them.
	OwnPart
	// KeepsIndex ops give positions when given positions (integer
	// arithmetic, copies, casts and views): what assign_pos numbers in
	// each rank's own rows stays so through them (an integer output of
	// a local [d] input is local [d], ir.TensorDist.Local).
	KeepsIndex
	// Identity ops give X's values unchanged, moved or relabelled
	// (assign, the views): a partial X of any reduction is Out partial
	// alike.
	Identity
	// LinearUnary ops are linear in their one input X (cumsum, scale
	// without a bias): X partial as a sum or an average gives Out partial
	// alike.
	LinearUnary
	// Additive ops sum or subtract their inputs (elementwise_add and
	// _sub, sum): inputs all partial alike, as sums or averages, give Out
	// partial alike.
	Additive
	// Monotone ops never decrease in their one input X (relu, tanh,
	// exp, cast, ...): the op of the largest part is the largest of the
	// op's parts, so X partial as a max or a min gives Out partial alike.
	Monotone
	// DataDependent ops move what the data decides (the MoE exchanges:
	// the routing's counts): their traffic is known only when they run.
	DataDependent
	// RankStart ops hold, in their start_index attr, the first row of
	// the rank's shard (c_embedding and its grad): each rank's lowering
	// computes it, and rank classes recompute it.
	RankStart
	// NumbersRows ops write positions into each rank's own rows of their
	// X (assign_pos): on a rank, the positions are rank-local (local [d]
	// in a dist) along the mesh dim X's rows are split on.
	NumbersRows
)

var traitNames = []string{"elementwise", "reduction", "view", "collective", "random", "control-flow", "side-effects",
	"shape-of-out", "backward-only", "own-part", "keeps-index", "identity", "linear-unary", "additive", "monotone", "data-dependent", "rank-start", "numbers-rows"}

// String returns the traits' names joined by "|", or "-" for none.
func (t Traits) String() string {
	s := ""
	for i, n := range traitNames {
		if t&(1<<i) != 0 {
			if s != "" {
				s += "|"
			}
			s += n
		}
	}
	if s == "" {
		return "-"
	}
	return s
}

// Grad says how append-backward differentiates a forward op type. Most
// are pure data: the grad op reads the slots of Reads and writes a
// Slot@GRAD output for each slot of Diff. Emit, when set, builds the grad
// op itself (cast and assign, whose grads are ops of the same type; the
// MoE exchanges, whose grads are each other).
type Grad struct {
	// Type is the grad op's type; "" means the forward type + "_grad".
	Type string
	// Reads lists the grad op's input slots in order. A plain name is a
	// forward slot (input first, then output) read under the same name and
	// skipped when the forward op has no such slot; "A|B" is the first of
	// A and B the forward op has (read under its own name); "S@GRAD" is
	// the gradient of the forward output slot S.
	Reads []string
	// Diff lists the forward input slots that may receive a gradient, in
	// the order of the grad op's output slots (Slot@GRAD).
	Diff []string
	// Emit, when set, builds the grad op from the forward op, its one
	// differentiable input var x, the gradients of the args of its
	// differentiable output slot (outGrads, one per arg: zeros for an arg
	// the loss does not depend on) and that of x (inGrad, never empty when
	// Emit is called).
	Emit func(fwd *ir.Op, x *ir.Var, outGrads []string, inGrad string) *ir.Op
	// Unsupported, when set, returns why this forward op cannot be
	// differentiated ("" when it can).
	Unsupported func(fwd *ir.Op) string
	// Infer, when set, replaces the derived grad op's inference (each
	// X@GRAD has the type of the forward input X the grad op reads), and
	// Shape its one-line rule.
	Infer func(c *Infer) error
	Shape string
	// Indexing is the grad op's (Def.Indexing), when it indexes rows.
	Indexing *Indexing
}

// Infer is what a Def's Infer function sees of one op: the types of its
// inputs, its attrs with the def's defaults, and where to set the types
// of its outputs. It is reused from op to op: nothing it returns may be
// kept.
type Infer struct {
	def  *Def
	op   *ir.Op
	ins  []*ir.Var // the op's input args' vars, flattened in slot order; nil for an unresolved name
	outs []*ir.Var
	vals []ir.Value // by def's attrs: the op's value, or the default
	res  []result
	buf  []int64   // backs the shapes of res and of Shape
	read *[]string // when set, collects the names of the attrs read (Def.Rule)
}

// result is one output type an Infer function set.
type result struct {
	slot   string
	i      int
	dtype  ir.DType
	shape  []int64
	scalar bool // a 0-d value: [] and [1] both match
}

// Op returns the op being inferred.
func (c *Infer) Op() *ir.Op { return c.op }

// argAt returns the var of arg i of the input slot, nil when the slot has
// no such arg or its name did not resolve.
func argAt(slots []ir.Slot, vars []*ir.Var, slot string, i int) *ir.Var {
	k := 0
	for _, s := range slots {
		if s.Name == slot {
			if i < len(s.Args) && k+i < len(vars) {
				return vars[k+i]
			}
			return nil
		}
		k += len(s.Args)
	}
	return nil
}

// In returns the type of the first arg of input slot, and whether the
// slot has one that is a dense tensor.
func (c *Infer) In(slot string) (ir.Type, bool) { return c.InAt(slot, 0) }

// InAt returns the type of arg i of input slot, and whether it is a
// dense tensor.
func (c *Infer) InAt(slot string, i int) (ir.Type, bool) {
	v := argAt(c.op.Inputs, c.ins, slot, i)
	if v == nil || !v.Type.IsTensor() {
		return ir.Type{}, false
	}
	return v.Type, true
}

// Out returns the declared type of arg i of output slot, and whether it
// is a dense tensor: an op whose output shape comes from nowhere else
// (recv_v2 without out_shape) may only check its dtype.
func (c *Infer) Out(slot string, i int) (ir.Type, bool) {
	v := argAt(c.op.Outputs, c.outs, slot, i)
	if v == nil || !v.Type.IsTensor() {
		return ir.Type{}, false
	}
	return v.Type, true
}

// NumIn returns the number of args of input slot.
func (c *Infer) NumIn(slot string) int { return len(c.op.Input(slot)) }

// NumOut returns the number of args of output slot.
func (c *Infer) NumOut(slot string) int { return len(c.op.Output(slot)) }

// Name returns the name of the first arg of input slot, for messages.
func (c *Infer) Name(slot string) string {
	if a := c.op.Input(slot); len(a) > 0 {
		return a[0]
	}
	return slot
}

// Shape returns n dims of scratch space, valid until the op is done.
func (c *Infer) Shape(n int) []int64 {
	if cap(c.buf)-len(c.buf) < n {
		// Earlier results keep the old array; only new shapes move.
		c.buf = make([]int64, 0, 2*cap(c.buf)+n+8)
	}
	s := c.buf[len(c.buf) : len(c.buf)+n]
	c.buf = c.buf[:len(c.buf)+n]
	return s
}

// Set sets the type of output slot's first arg. shape is copied; a
// dtype of ir.DTypeInvalid leaves the dtype unchecked, a dim of -1 that
// dim.
func (c *Infer) Set(slot string, d ir.DType, shape []int64) { c.SetAt(slot, 0, d, shape) }

// SetAt sets the type of arg i of output slot.
func (c *Infer) SetAt(slot string, i int, d ir.DType, shape []int64) {
	s := c.Shape(len(shape))
	copy(s, shape)
	c.res = append(c.res, result{slot: slot, i: i, dtype: d, shape: s})
}

// SetScalar sets output slot's first arg to a 0-d value of dtype d, which
// a var declares as [] or, in programs older than Paddle 2.5, as [1].
func (c *Infer) SetScalar(slot string, d ir.DType) {
	c.res = append(c.res, result{slot: slot, dtype: d, scalar: true})
}

// Errorf returns an error for an inconsistent op.
func (c *Infer) Errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// attr returns the op's attr name, or the def's default for it.
func (c *Infer) attr(name string) ir.Value {
	if c.read != nil && !slices.Contains(*c.read, name) {
		*c.read = append(*c.read, name)
	}
	if c.def != nil && len(c.vals) == len(c.def.Attrs) {
		for i := range c.def.Attrs {
			if c.def.Attrs[i].Name == name {
				return c.vals[i]
			}
		}
	}
	return c.op.Attrs.Get(name) // an attr the def does not list
}

// Int returns int attr name (an int or a long), or its default.
func (c *Infer) Int(name string) int64 {
	switch v := c.attr(name).(type) {
	case ir.Int:
		return int64(v)
	case ir.Long:
		return int64(v)
	}
	return 0
}

// Float returns float attr name, or its default.
func (c *Infer) Float(name string) float64 {
	switch v := c.attr(name).(type) {
	case ir.Float:
		return float64(v)
	case ir.Float64:
		return float64(v)
	}
	return 0
}

// Bool returns bool attr name (a bool, or an int that is not 0), or its
// default.
func (c *Infer) Bool(name string) bool {
	switch v := c.attr(name).(type) {
	case ir.Bool:
		return bool(v)
	case ir.Int:
		return v != 0
	case ir.Long:
		return v != 0
	}
	return false
}

// String returns string attr name, or its default.
func (c *Infer) String(name string) string {
	v, _ := c.attr(name).(ir.String)
	return string(v)
}

// Ints returns ints attr name (ints or longs), or its default, and
// whether the op or the default has it.
func (c *Infer) Ints(name string) ([]int64, bool) {
	switch v := c.attr(name).(type) {
	case ir.Ints:
		return v, true
	case ir.Longs:
		return v, true
	}
	return nil, false
}

// Has reports whether the op carries attr name itself.
func (c *Infer) Has(name string) bool { return c.op.Attrs.Has(name) }

// AttrDType returns the dtype a dtype attr's value names (see
// Attr.DType): an Int or Long Paddle VarType code, or a String PIR name.
// ok is false for a value that names none (-1, "undefined", an unknown
// code).
func AttrDType(v ir.Value) (d ir.DType, ok bool) {
	switch x := v.(type) {
	case ir.Int:
		return ir.DTypeFromPaddle(int64(x))
	case ir.Long:
		return ir.DTypeFromPaddle(int64(x))
	case ir.String:
		d, ok = pirDTypes[string(x)]
	}
	return d, ok
}

// DTypeValue returns the value naming d in like's form (an Int or Long
// code, a String name), so that an attr keeps the kind Paddle wrote it
// as. ok is false when like is of another kind or d has no such name.
func DTypeValue(d ir.DType, like ir.Value) (ir.Value, bool) {
	switch like.(type) {
	case ir.Int, ir.Long:
		c, ok := d.PaddleCode()
		if !ok {
			return nil, false
		}
		if _, long := like.(ir.Long); long {
			return ir.Long(c), true
		}
		return ir.Int(c), true
	case ir.String:
		for name, pd := range pirDTypes {
			if pd == d {
				return ir.String(name), true
			}
		}
	}
	return nil, false
}
