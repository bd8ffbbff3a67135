package passes

import (
	"slices"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/spmd"
)

// InsertReshardsPass makes every data movement a completed module needs
// explicit, as reshard ops.
func InsertReshardsPass() *Pass {
	return &Pass{
		Name: "insert-reshards",
		Doc: `make every reshard the dists need an explicit reshard op
Wherever an op reads a var otherwise than its dist says (another mapping,
another mesh, or a partial value read whole), a reshard(X: v) -> (Out:
v.reshard_N) before the op gives it the dist the op requires, and the op
reads that. The same var needed in the same dist in one block is
resharded once, before its first reader; a reshard of a reshard's output
starts from the original var. An op writing a var with another mapping
than the var's writes a new var, and a reshard after it converts that
into the var. The test is spmd.NeedsReshard's, as completion's list of
reshards and check-annotations'. Counter: reshards.`,
		Run: func(ctx *Context, m *ir.Module) error {
			ctx.Count("reshards", InsertReshards(m))
			return nil
		},
	}
}

// InsertReshards inserts into every block of m's main program the
// reshard ops its dists need, and returns how many. Args it cannot
// compare (no dist, an unknown mesh, a mapping that does not fit) are
// left as they are, for check-annotations to refuse.
func InsertReshards(m *ir.Module) int {
	if m.Main == nil {
		return 0
	}
	n := 0
	for _, b := range m.Main.Blocks {
		if b != nil {
			n += insertReshards(m, m.Main, b)
		}
	}
	return n
}

// reshardKey is a var needed in a dist (the mapping spelled).
type reshardKey struct {
	v, mesh, mapping string
}

// made is a var a reshard wrote from src. It stands for src while
// neither is written again: src still at version srcVer, the var at
// outVer.
type made struct {
	name, src      string
	srcVer, outVer int
	// op is the reshard insert-reshards made (nil: one it found), and by
	// the id of the reader its origin names: the least of its readers',
	// so that the origin does not depend on the order of independent ops.
	op *ir.Op
	by int64
}

// fresh reports whether neither var was written since the reshard.
func (s *blockReshards) fresh(c made) bool {
	return s.ver[c.src] == c.srcVer && s.ver[c.name] == c.outVer
}

// blockReshards is one block's state: the reshards made so far and what
// they still stand for.
type blockReshards struct {
	m   *ir.Module
	p   *ir.Program
	b   *ir.Block
	ops []*ir.Op
	n   int
	// ver counts the writes of each var a made stands for or comes
	// from, since the first made that did (watch): fresh compares
	// counts of one var only, so the many vars no reshard concerns go
	// uncounted and the map stays small.
	ver    map[string]int
	cache  map[reshardKey]*made // the reshard serving a var in a dist
	source map[string]made      // a reshard's output: where it came from
	spelt  map[string]*ir.Var   // lookups not in b (p.LookupVar walks the ancestors)
	meshes map[string]*ir.ProcessMesh
}

func insertReshards(m *ir.Module, p *ir.Program, b *ir.Block) int {
	s := &blockReshards{m: m, p: p, b: b, ver: map[string]int{}, cache: map[reshardKey]*made{},
		source: map[string]made{}, spelt: map[string]*ir.Var{}}
	s.ops = make([]*ir.Op, 0, len(b.Ops))
	for _, op := range b.Ops {
		s.op(op)
	}
	b.Ops = s.ops
	return s.n
}

func (s *blockReshards) lookup(name string) *ir.Var {
	if v := s.b.Var(name); v != nil {
		return v // what LookupVar finds first, without a map entry per var
	}
	if v, ok := s.spelt[name]; ok {
		return v
	}
	v := s.p.LookupVar(s.b, name)
	s.spelt[name] = v
	return v
}

// op places op and the reshards it needs.
func (s *blockReshards) op(op *ir.Op) {
	if op.Type == ops.ReshardType {
		s.ops = append(s.ops, op)
		s.wrote(op)
		if x, out := op.Input("X"), op.Output("Out"); len(x) == 1 && len(out) == 1 {
			s.source[out[0]] = made{name: out[0], src: x[0], srcVer: s.watch(x[0]), outVer: s.watch(out[0])}
		}
		return
	}
	d := op.Dist
	om := s.mesh(d)
	if om == nil || hasSubBlock(op) {
		// A control-flow op's args are its sub-blocks' reads and writes,
		// by name: its sub-blocks' ops get the reshards they need.
		s.ops = append(s.ops, op)
		s.wrote(op)
		return
	}
	for si := range op.Inputs {
		for ai, name := range op.Inputs[si].Args {
			if slices.Contains(op.Inputs[si].Args[:ai], name) || seenSlotArg(op.Inputs[:si], name) {
				continue // renamed with its first read
			}
			v, vm := s.arg(name)
			if v == nil {
				continue
			}
			dm, ok := d.InputMapping(name)
			if !ok || !fits(dm, v, om) || !spmd.NeedsReshard(ops.ReadsOwnPart(op.Type), true, dm, om, v.Dist, vm, s.carries(op, v, om)) {
				continue
			}
			if to := s.reshardIn(op, name, v, vm, dm, om); to != name {
				renameArg(op.Inputs, d.Inputs, name, to)
			}
		}
	}
	var after []*ir.Op
	var outs []string
	for si := range op.Outputs {
		for ai, name := range op.Outputs[si].Args {
			if slices.Contains(op.Outputs[si].Args[:ai], name) || seenSlotArg(op.Outputs[:si], name) {
				continue
			}
			v, vm := s.arg(name)
			if v == nil {
				continue
			}
			dm, ok := d.OutputMapping(name)
			if !ok || !fits(dm, v, om) || !spmd.NeedsReshard(ops.ReadsOwnPart(op.Type), false, dm, om, v.Dist, vm, false) {
				continue
			}
			// The op writes a new var as it gives it; a reshard after it
			// makes that the var later readers read.
			w := s.newVar(name, v, &ir.TensorDist{Mesh: om.Name, DimsMapping: slices.Clone(dm), Partial: slices.Clone(v.Dist.Partial)})
			renameArg(op.Outputs, d.Outputs, name, w.Name())
			after = append(after, s.reshard(op, w, v, v.Dist.Mesh,
				op.String()+" writes "+name+" as "+spellMapping(om, vm, dm)+", which is "+spellDist(v)))
			outs = append(outs, name)
		}
	}
	s.ops = append(s.ops, op)
	s.wrote(op)
	for i, r := range after {
		s.ops = append(s.ops, r)
		s.wrote(r)
		src := r.Inputs[0].Args[0]
		s.source[outs[i]] = made{name: outs[i], src: src, srcVer: s.watch(src), outVer: s.watch(outs[i])}
	}
}

// reshardIn returns the var op reads in place of name (var v on mesh
// vm), which it reads as mapping dm on mesh om, making the reshard
// unless one made before still serves.
func (s *blockReshards) reshardIn(op *ir.Op, name string, v *ir.Var, vm *ir.ProcessMesh, dm []int, om *ir.ProcessMesh) string {
	// A reshard's output is resharded from where it came from, as long
	// as neither was written since (the bound: a chain visits each
	// reshard once).
	from, fv, fvm := name, v, vm
	for range len(s.source) {
		c, ok := s.source[from]
		if !ok || !s.fresh(c) {
			break
		}
		x, xm := s.arg(c.src)
		if x == nil {
			break
		}
		from, fv, fvm = c.src, x, xm
	}
	if from != name && !spmd.NeedsReshard(ops.ReadsOwnPart(op.Type), true, dm, om, fv.Dist, fvm, false) {
		return from // the original already is as the op reads it
	}
	key := reshardKey{from, om.Name, ir.FormatInts(dm)}
	origin := op.String() + " reads " + name + " as " + spellMapping(om, vm, dm) + ", which is " + spellDist(v)
	if c, ok := s.cache[key]; ok && s.fresh(*c) {
		if op.ID < c.by {
			c.by = op.ID
			c.op.Attrs.Set("origin", ir.String(origin))
		}
		return c.name
	}
	w := s.newVar(from, fv, &ir.TensorDist{Mesh: om.Name, DimsMapping: slices.Clone(dm)})
	r := s.reshard(op, fv, w, om.Name, origin)
	s.ops = append(s.ops, r)
	c := made{name: w.Name(), src: from, srcVer: s.watch(from), outVer: s.watch(w.Name()), op: r, by: op.ID}
	s.cache[key] = &c
	s.source[w.Name()] = c
	return w.Name()
}

// reshard builds reshard(X: x) -> (Out: out) on mesh, with the role of
// the op it serves (a loss op's reshard is no loss).
func (s *blockReshards) reshard(user *ir.Op, x, out *ir.Var, mesh, origin string) *ir.Op {
	s.n++
	r := &ir.Op{
		ID:      s.m.FreshOpID(),
		Type:    ops.ReshardType,
		Inputs:  []ir.Slot{{Name: "X", Args: []string{x.Name()}}},
		Outputs: []ir.Slot{{Name: "Out", Args: []string{out.Name()}}},
		Role:    user.Role &^ ir.RoleLoss,
		Dist: &ir.OpDist{
			Mesh: mesh, ImplType: ops.ReshardType, ImplIndex: 0,
			Outputs: []ir.ArgDist{{Name: out.Name(), DimsMapping: slices.Clone(out.Dist.DimsMapping)}},
		},
	}
	if pm := s.m.Mesh(mesh); pm != nil && fitsMesh(x.Dist.DimsMapping, pm) {
		// X's mapping is on X's mesh: an op dist on a mesh of fewer dims
		// cannot hold it (as completion writes a reshard's), and X's var
		// says it.
		r.Dist.Inputs = []ir.ArgDist{{Name: x.Name(), DimsMapping: slices.Clone(x.Dist.DimsMapping)}}
	}
	r.Attrs.Set("origin", ir.String(origin))
	return r
}

// newVar declares in the block a var typed like v, named v.reshard_N,
// with dist d.
func (s *blockReshards) newVar(base string, v *ir.Var, d *ir.TensorDist) *ir.Var {
	w := ir.Var{Type: v.Type, Flags: v.Flags & ir.FlagStopGradient}.Named(s.m.FreshName(base + ".reshard"))
	w.Type.Shape = slices.Clone(v.Type.Shape)
	w.Dist = d
	if err := s.b.AddVar(&w); err != nil {
		panic("insert-reshards: " + err.Error()) // FreshName's names are fresh
	}
	return s.b.Var(w.Name())
}

// wrote counts op's writes of watched vars, its sub-blocks' ops'
// included.
func (s *blockReshards) wrote(op *ir.Op) {
	for name := range op.OutputNames {
		if n, ok := s.ver[name]; ok {
			s.ver[name] = n + 1
		}
	}
	for bi := range op.SubBlocks {
		if sb := s.p.Block(bi); sb != nil {
			for _, o := range sb.Ops {
				s.wrote(o)
			}
		}
	}
}

// watch starts counting name's writes, if it was not counted yet, and
// returns its count.
func (s *blockReshards) watch(name string) int {
	n, ok := s.ver[name]
	if !ok {
		s.ver[name] = 0
	}
	return n
}

// arg returns the dense tensor var name with a dist on a known mesh, and
// that mesh, or nil.
func (s *blockReshards) arg(name string) (*ir.Var, *ir.ProcessMesh) {
	v := s.lookup(name)
	if v == nil || v.Type.Kind != ir.DenseTensor || v.Dist == nil {
		return nil, nil
	}
	vm := s.m.Mesh(v.Dist.Mesh)
	if vm == nil || !fits(v.Dist.DimsMapping, v, vm) {
		return nil, nil
	}
	return v, vm
}

func (s *blockReshards) mesh(d *ir.OpDist) *ir.ProcessMesh {
	if d == nil {
		return nil
	}
	return s.m.Mesh(d.Mesh)
}

// carries reports whether op carries its partial input v through to a
// partial output, along each of v's partial mesh dims: a linear op's Out
// (ops.PassesPartial) or a sum of partial values. It is the test
// check-annotations makes, so that what the pass leaves it accepts.
func (s *blockReshards) carries(op *ir.Op, v *ir.Var, om *ir.ProcessMesh) bool {
	if !v.Dist.IsPartial() {
		return false
	}
	// Only an op linear in its partial inputs carries their parts (an add
	// of a partial and a whole value does not), as check-annotations holds.
	var partial []bool
	for name := range op.InputNames {
		if x, _ := s.arg(name); x != nil && x.Type.IsTensor() {
			partial = append(partial, x.Dist != nil && x.Dist.IsPartial())
		}
	}
	maxmin := !slices.ContainsFunc(v.Dist.Partial, func(p ir.Partial) bool { return p.Reduce == ir.ReduceSum || p.Reduce == ir.ReduceAvg })
	if !maxmin && !ops.LinearInParts(op, partial) || maxmin && !ops.KeepsExtremum(op) {
		return false
	}
	for _, p := range v.Dist.Partial {
		found := false
		for name := range op.OutputNames {
			o, m := s.arg(name)
			if o != nil && spmd.SameMesh(m, om) && slices.ContainsFunc(o.Dist.Partial, func(q ir.Partial) bool { return q.Dim == p.Dim }) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// fits reports whether mapping dm has one entry per dim of v, each -1 or
// a dim of mesh pm: one the annotation checks accept the shape of.
func fits(dm []int, v *ir.Var, pm *ir.ProcessMesh) bool {
	if len(dm) != len(v.Type.Shape) {
		return false
	}
	for _, x := range dm {
		if x < -1 || x >= len(pm.Shape) {
			return false
		}
	}
	return true
}

// fitsMesh reports whether every mesh dim dm names is one of pm's.
func fitsMesh(dm []int, pm *ir.ProcessMesh) bool {
	for _, k := range dm {
		if k >= len(pm.Shape) {
			return false
		}
	}
	return true
}

// renameArg makes the op's args name to where they named from, and
// their arg dists alike.
func renameArg(slots []ir.Slot, ads []ir.ArgDist, from, to string) {
	for i := range slots {
		if !slices.Contains(slots[i].Args, from) {
			continue
		}
		args := slices.Clone(slots[i].Args)
		for j, a := range args {
			if a == from {
				args[j] = to
			}
		}
		slots[i].Args = args
	}
	for i := range ads {
		if ads[i].Name == from {
			ads[i].Name = to
		}
	}
}

func seenSlotArg(slots []ir.Slot, name string) bool {
	for _, sl := range slots {
		if slices.Contains(sl.Args, name) {
			return true
		}
	}
	return false
}

// spellMapping spells dm, on mesh om, with the mesh when it is not the
// var's (vm).
func spellMapping(om, vm *ir.ProcessMesh, dm []int) string {
	if vm != nil && spmd.SameMesh(om, vm) {
		return ir.FormatInts(dm)
	}
	return "@" + om.Name + ir.FormatInts(dm)
}

// spellDist spells v's dist as the annotation checks do: @mesh[mapping]
// and its partial dims.
func spellDist(v *ir.Var) string {
	if v == nil || v.Dist == nil {
		return "(no dist)"
	}
	return v.Dist.String()
}

func hasSubBlock(op *ir.Op) bool {
	for range op.SubBlocks {
		return true
	}
	return false
}
