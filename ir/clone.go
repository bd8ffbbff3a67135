package ir

import "slices"

// Clone returns a deep copy of m that shares no mutable memory with it.
// Strings are shared, being immutable. The clone's fresh-id and fresh-name
// sequences continue where m's are.
func (m *Module) Clone() *Module {
	c := &Module{
		Name:       m.Name,
		Attrs:      m.Attrs.Clone(),
		Meshes:     make([]*ProcessMesh, len(m.Meshes)),
		Main:       m.Main.Clone(),
		Startup:    m.Startup.Clone(),
		ParamGrads: slices.Clone(m.ParamGrads),
		gen:        m.gen.clone(),
	}
	for i, pm := range m.Meshes {
		c.Meshes[i] = pm.Clone()
	}
	if m.Meshes == nil {
		c.Meshes = nil
	}
	if m.Groups != nil {
		c.Groups = make([]Group, len(m.Groups))
		for i, g := range m.Groups {
			c.Groups[i] = Group{ID: g.ID, Ranks: slices.Clone(g.Ranks)}
		}
	}
	return c
}

// Clone returns a deep copy of the mesh.
func (pm *ProcessMesh) Clone() *ProcessMesh {
	if pm == nil {
		return nil
	}
	return &ProcessMesh{
		Name:       pm.Name,
		Shape:      slices.Clone(pm.Shape),
		DimNames:   slices.Clone(pm.DimNames),
		ProcessIDs: slices.Clone(pm.ProcessIDs),
	}
}

// Clone returns a deep copy of the program; nil stays nil.
func (p *Program) Clone() *Program {
	if p == nil {
		return nil
	}
	var cl cloner
	c := &Program{Name: p.Name, Rank: p.Rank, Blocks: make([]*Block, len(p.Blocks))}
	for i, b := range p.Blocks {
		c.Blocks[i] = cl.block(b)
	}
	return c
}

// Clone returns a deep copy of the block.
func (b *Block) Clone() *Block {
	var cl cloner
	return cl.block(b)
}

// Clone returns a deep copy of the op.
func (o *Op) Clone() *Op {
	var cl cloner
	c := *o
	cl.op(&c)
	return &c
}

// Clone returns a deep copy of the var.
func (v *Var) Clone() *Var {
	var cl cloner
	c := *v
	cl.var_(&c)
	return &c
}

// cloner copies blocks into a few large arrays (slabs) rather than one
// allocation per slice: cloning is what every rank's partition starts
// with. Sub-slices are capped, so appending to one reallocates it.
type cloner struct {
	vars   slab[Var]
	ops    slab[Op]
	strs   slab[string]
	slots  slab[Slot]
	attrs  slab[Attr]
	args   slab[ArgDist]
	ints   slab[int]
	i64s   slab[int64]
	parts  slab[Partial]
	tdists slab[TensorDist]
	odists slab[OpDist]
}

func (cl *cloner) block(b *Block) *Block {
	if b == nil {
		return nil
	}
	c := &Block{Index: b.Index, Parent: b.Parent, Forward: b.Forward}
	c.vars = make([]*Var, len(b.vars))
	for i, v := range b.vars {
		if v == nil {
			continue
		}
		v2 := cl.vars.one()
		*v2 = *v
		cl.var_(v2)
		c.vars[i] = v2
	}
	// The name index holds positions, the same in the copy.
	c.index = nameTable{slots: slices.Clone(b.index.slots), posBits: b.index.posBits, n: b.index.n}
	c.Ops = make([]*Op, len(b.Ops))
	for i, op := range b.Ops {
		if op == nil {
			continue
		}
		o := cl.ops.one()
		*o = *op
		cl.op(o)
		c.Ops[i] = o
	}
	return c
}

// var_ replaces v's slices and pointers with copies.
func (cl *cloner) var_(v *Var) {
	v.Type = cl.typ(v.Type)
	v.Attrs = cl.attrList(v.Attrs)
	if d := v.Dist; d != nil {
		d2 := cl.tdists.one()
		*d2 = TensorDist{Mesh: d.Mesh, DimsMapping: cloneOrNil(&cl.ints, d.DimsMapping), Partial: cloneOrNil(&cl.parts, d.Partial), Local: cloneOrNil(&cl.ints, d.Local)}
		v.Dist = d2
	}
}

// typ returns a copy of t that shares no memory with it.
func (cl *cloner) typ(t Type) Type {
	t.Shape = cloneOrNil(&cl.i64s, t.Shape)
	if t.Elems != nil {
		es := make([]Type, len(t.Elems))
		for i, e := range t.Elems {
			es[i] = cl.typ(e)
		}
		t.Elems = es
	}
	return t
}

// op replaces o's slices and pointers with copies.
func (cl *cloner) op(o *Op) {
	o.Inputs = cl.slotList(o.Inputs)
	o.Outputs = cl.slotList(o.Outputs)
	o.Attrs = cl.attrList(o.Attrs)
	if d := o.Dist; d != nil {
		d2 := cl.odists.one()
		*d2 = *d
		d2.Inputs = cl.argList(d.Inputs)
		d2.Outputs = cl.argList(d.Outputs)
		o.Dist = d2
	}
}

func (cl *cloner) slotList(ss []Slot) []Slot {
	if ss == nil {
		return nil
	}
	out := cl.slots.copyOf(ss)
	for i := range out {
		out[i].Args = cloneOrNil(&cl.strs, out[i].Args)
	}
	return out
}

func (cl *cloner) attrList(as Attrs) Attrs {
	if as == nil {
		return nil
	}
	out := cl.attrs.copyOf(as)
	for i := range out {
		out[i].Value = cloneValue(out[i].Value)
	}
	return out
}

func (cl *cloner) argList(as []ArgDist) []ArgDist {
	if as == nil {
		return nil
	}
	out := cl.args.copyOf(as)
	for i := range out {
		out[i].DimsMapping = cloneOrNil(&cl.ints, out[i].DimsMapping)
	}
	return out
}

// cloneOrNil copies xs into the slab, keeping nil nil and empty empty.
func cloneOrNil[T any](s *slab[T], xs []T) []T {
	if xs == nil {
		return nil
	}
	return s.copyOf(xs)
}
