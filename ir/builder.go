package ir

import (
	"errors"
	"fmt"
	"slices"
)

// Builder appends vars and ops to one block of a module, handing out op ids
// from the module. Mistakes (a var declared twice, an unknown var in
// Annotate) are collected and returned by Err, so model code can build a
// whole program and check once.
type Builder struct {
	m    *Module
	p    *Program
	b    *Block
	errs *[]error // shared by the builders derived from one NewBuilder
}

// NewBuilder returns a builder that appends to block 0 of m's main program.
func NewBuilder(m *Module) *Builder {
	if m.Main == nil {
		m.Main = NewProgram("main")
	}
	return &Builder{m: m, p: m.Main, b: m.Main.Global(), errs: new([]error)}
}

// Module returns the module being built.
func (bl *Builder) Module() *Module { return bl.m }

// Block returns the block being appended to.
func (bl *Builder) Block() *Block { return bl.b }

// Err returns every mistake seen so far, joined, or nil.
func (bl *Builder) Err() error { return errors.Join(*bl.errs...) }

func (bl *Builder) fail(format string, args ...any) {
	*bl.errs = append(*bl.errs, fmt.Errorf(format, args...))
}

// Startup returns a builder for block 0 of the startup program, creating
// the program when the module has none. Both builders share the error list.
func (bl *Builder) Startup() *Builder {
	if bl.m.Startup == nil {
		bl.m.Startup = NewProgram("startup")
	}
	return &Builder{m: bl.m, p: bl.m.Startup, b: bl.m.Startup.Global(), errs: bl.errs}
}

// SubBlock creates a block whose parent is the current block and returns a
// builder for it. Refer to it from an op with BlockRef(sub.Block().Index).
func (bl *Builder) SubBlock() *Builder {
	nb := bl.p.AddBlock(bl.b.Index)
	return &Builder{m: bl.m, p: bl.p, b: nb, errs: bl.errs}
}

// Mesh adds a named process mesh to the module and returns it.
func (bl *Builder) Mesh(name string, shape []int, dims []string, ranks []int) *ProcessMesh {
	if bl.m.Mesh(name) != nil {
		bl.fail("mesh %s declared twice", quoteName(name))
	}
	pm := &ProcessMesh{Name: name, Shape: shape, DimNames: dims, ProcessIDs: ranks}
	bl.m.Meshes = append(bl.m.Meshes, pm)
	return pm
}

func (bl *Builder) addVar(name string, k VarKind, t Type) *Var {
	v := &Var{name: name, Kind: k, Type: t}
	if err := bl.b.AddVar(v); err != nil {
		*bl.errs = append(*bl.errs, err)
	}
	return v
}

// Var declares a plain var in the current block.
func (bl *Builder) Var(name string, t Type) *Var { return bl.addVar(name, KindVar, t) }

// Persist declares a persistable var in the current block.
func (bl *Builder) Persist(name string, t Type) *Var { return bl.addVar(name, KindPersist, t) }

// Param declares a parameter in the current block.
func (bl *Builder) Param(name string, t Type) *Var { return bl.addVar(name, KindParam, t) }

// Op appends an op with a fresh id and role forward.
func (bl *Builder) Op(typ string, ins, outs []Slot, attrs ...Attr) *Op {
	op := &Op{ID: bl.m.FreshOpID(), Type: typ, Inputs: ins, Outputs: outs}
	for _, a := range attrs {
		op.Attrs.Set(a.Name, a.Value)
	}
	bl.b.Ops = append(bl.b.Ops, op)
	return op
}

// Annotate gives op an OpDist on the mesh of its first annotated argument,
// taking each argument's dims_mapping from the var's TensorDist (a var
// without one is an error recorded in Err).
func (bl *Builder) Annotate(op *Op, implType string, implIndex int) *Op {
	d := &OpDist{ImplType: implType, ImplIndex: implIndex}
	fill := func(slots []Slot) []ArgDist {
		var out []ArgDist
		for _, s := range slots {
			for _, a := range s.Args {
				v := bl.p.LookupVar(bl.b, a)
				if v == nil || v.Dist == nil {
					bl.fail("annotate %s: var %s has no dist", op, quoteName(a))
					continue
				}
				if d.Mesh == "" {
					d.Mesh = v.Dist.Mesh
				}
				out = append(out, ArgDist{Name: a, DimsMapping: slices.Clone(v.Dist.DimsMapping)})
			}
		}
		return out
	}
	d.Inputs = fill(op.Inputs)
	d.Outputs = fill(op.Outputs)
	op.Dist = d
	return op
}

// S returns a slot; S("X", "a", "b") is X: [a, b] and S("X") an empty slot.
// The slot has its own copy of args: S("X", op.Input("X")...) shares no
// memory with op, so that a pass renaming one op's arg renames no other's.
func S(name string, args ...string) Slot {
	return Slot{Name: name, Args: append(make([]string, 0, len(args)), args...)}
}

// Slots pairs names with single args: Slots("X", "x", "Y", "w") is
// [X: x, Y: w]. An odd count panics: it is a programming error.
func Slots(pairs ...string) []Slot {
	if len(pairs)%2 != 0 {
		panic("ir.Slots: odd number of arguments")
	}
	ss := make([]Slot, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		ss = append(ss, Slot{Name: pairs[i], Args: []string{pairs[i+1]}})
	}
	return ss
}

// A returns an attribute.
func A(name string, v Value) Attr { return Attr{Name: name, Value: v} }

// WithDist sets the var's distribution on mesh with the given dims_mapping.
func (v *Var) WithDist(mesh string, mapping ...int) *Var {
	if mapping == nil {
		mapping = []int{}
	}
	v.Dist = &TensorDist{Mesh: mesh, DimsMapping: mapping}
	return v
}

// WithPartial marks the var partial along mesh dim dim, pending reduction r.
// Call it after WithDist.
func (v *Var) WithPartial(dim int, r Reduce) *Var {
	if v.Dist == nil {
		v.Dist = &TensorDist{}
	}
	v.Dist.Partial = append(v.Dist.Partial, Partial{Dim: dim, Reduce: r})
	slices.SortStableFunc(v.Dist.Partial, func(a, b Partial) int { return a.Dim - b.Dim })
	return v
}

// WithLocal marks the var's values rank-local along mesh dim dim (see
// TensorDist.Local). Call it after WithDist.
func (v *Var) WithLocal(dim int) *Var {
	if v.Dist == nil {
		v.Dist = &TensorDist{}
	}
	if !slices.Contains(v.Dist.Local, dim) {
		v.Dist.Local = append(v.Dist.Local, dim)
		slices.Sort(v.Dist.Local)
	}
	return v
}

// WithFlags sets flags on the var.
func (v *Var) WithFlags(f VarFlags) *Var {
	v.Flags |= f
	return v
}

// WithRole sets the op's role.
func (o *Op) WithRole(r Role) *Op {
	o.Role = r
	return o
}

// WithFwd sets the id of the forward op of a grad op.
func (o *Op) WithFwd(id int64) *Op {
	o.Fwd = id
	return o
}

// WithAttr sets an attribute.
func (o *Op) WithAttr(name string, v Value) *Op {
	o.Attrs.Set(name, v)
	return o
}
