package ir

import "slices"

// Clone returns a deep copy of m that shares no mutable memory with it.
// Strings are shared, being immutable. The clone's fresh-id and fresh-name
// sequences continue where m's are.
func (m *Module) Clone() *Module {
	c := &Module{
		Name:       m.Name,
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
	c := &Program{Name: p.Name, Rank: p.Rank, Blocks: make([]*Block, len(p.Blocks))}
	for i, b := range p.Blocks {
		c.Blocks[i] = b.Clone()
	}
	return c
}

// Clone returns a deep copy of the block.
func (b *Block) Clone() *Block {
	c := &Block{Index: b.Index, Parent: b.Parent, Forward: b.Forward}
	// One backing array for all vars and one for all ops keeps a clone
	// of a large program to a handful of allocations per block.
	vars := make([]Var, len(b.vars))
	c.vars = make([]*Var, len(b.vars))
	for i, v := range b.vars {
		vars[i] = *v
		v2 := &vars[i]
		v2.Type.Shape = slices.Clone(v.Type.Shape)
		v2.Attrs = v.Attrs.Clone()
		v2.Dist = v.Dist.Clone()
		c.vars[i] = v2
	}
	ops := make([]Op, len(b.Ops))
	c.Ops = make([]*Op, len(b.Ops))
	for i, op := range b.Ops {
		ops[i] = *op
		o := &ops[i]
		o.Inputs = cloneSlots(op.Inputs)
		o.Outputs = cloneSlots(op.Outputs)
		o.Attrs = op.Attrs.Clone()
		o.Dist = op.Dist.Clone()
		c.Ops[i] = o
	}
	return c
}

// Clone returns a deep copy of the op.
func (o *Op) Clone() *Op {
	c := *o
	c.Inputs = cloneSlots(o.Inputs)
	c.Outputs = cloneSlots(o.Outputs)
	c.Attrs = o.Attrs.Clone()
	c.Dist = o.Dist.Clone()
	return &c
}

// Clone returns a deep copy of the var.
func (v *Var) Clone() *Var {
	c := *v
	c.Type.Shape = slices.Clone(v.Type.Shape)
	c.Attrs = v.Attrs.Clone()
	c.Dist = v.Dist.Clone()
	return &c
}

func cloneSlots(ss []Slot) []Slot {
	if ss == nil {
		return nil
	}
	out := make([]Slot, len(ss))
	for i, s := range ss {
		out[i] = Slot{Name: s.Name, Args: slices.Clone(s.Args)}
	}
	return out
}
