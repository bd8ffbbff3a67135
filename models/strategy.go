package models

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
)

// Strategies lists the strategies Annotate knows.
var Strategies = []string{"dp", "mp", "dp,mp"}

// Annotate gives every var and op of main's block 0 of an MLP-shaped
// module (MLP's ops, with or without their grad ops) a distribution on
// mesh for strategy, and adds mesh to the module (a mesh of the same
// name already there must be equal). Startup vars take the dist of
// main's var of the same name. On error the module is left unchanged.
//
// A strategy is its seeds: the data vars' batch dim (dim 0) on dp, the
// params' splits below; complete (package complete) infers every other
// var's and op's dist and impl from them by the op table's sharding
// rules. A strategy whose seeds would leave completion a conflict, an
// uneven split or a reshard to insert is refused, naming them. The
// strategies, with dp and mp the mesh dims of those names:
//
//   - "dp": data parallel. Params are replicated; the activations
//     follow the batch, [dp, -1].
//   - "mp": Megatron tensor parallel, layers in pairs. The first of a
//     pair is column-parallel: w [-1, mp], b [mp]; the second
//     row-parallel: w [mp, -1], b [-1]. mean needs its input replicated
//     along mp, so the layer count must be even (an error otherwise).
//   - "dp,mp": both, on a mesh with dims dp and mp.
//
// The loss is then a scalar ([]), partial [dp:avg] when the batch is
// split (each rank holds the mean of its shard), and a grad v@GRAD has
// v's mapping: completion's rules, which TestZoo in package complete
// holds to the hand-written strategies these seeds replaced.
func Annotate(m *ir.Module, strategy string, mesh *ir.ProcessMesh) error {
	a, err := newAnnotator(m, strategy, mesh, Strategies, "")
	if err != nil {
		return err
	}
	a.dataVars()
	mp := a.mpAxis
	layer := 0
	column := map[string]bool{} // the Outs of column-parallel matmuls
	for _, op := range a.forwardOps() {
		switch op.Type {
		case "matmul_v2":
			w, out := op.Input("Y"), op.Output("Out")
			if len(w) != 1 || len(out) != 1 {
				a.fail("%s: want one Y and one Out", op)
				continue
			}
			switch {
			case mp < 0:
				a.set(w[0], []int{-1, -1})
			case layer%2 == 0:
				a.set(w[0], []int{-1, mp})
				column[out[0]] = true
			default:
				a.set(w[0], []int{mp, -1})
			}
			layer++
		case "elementwise_add":
			// A column-parallel layer's bias is split as its columns.
			if x, b := op.Input("X"), op.Input("Y"); len(x) == 1 && len(b) == 1 && column[x[0]] && a.isParam(b[0]) {
				a.set(b[0], []int{mp})
			}
		}
	}
	if mp >= 0 && layer%2 != 0 {
		a.fail("strategy %s needs an even number of layers (column- then row-parallel pairs, so that the loss input is replicated along mp), have %d", strategy, layer)
	}
	a.seedParams()
	return a.complete()
}

// annotator holds a strategy's seeds while they are made: the dists of
// a few vars and ops, from which complete infers the rest.
type annotator struct {
	m        *ir.Module
	strategy string
	// mesh holds the tokens: activations and dense params. With ep
	// strategies expert is the experts' mesh (for "dp,ep" mesh is then a
	// 1-D view of its ranks); otherwise nil.
	mesh, expert *ir.ProcessMesh
	meshes       []*ir.ProcessMesh // to add to the module
	g            *ir.Block
	dpAxis       int // batch dim's mesh dim of mesh, -1 when not split
	mpAxis       int // tensor-parallel mesh dim, -1 when none
	// epAxis is expert's dim the experts are split along, rowAxis the
	// one the expert-side rows are (dp in "dp,ep"), -1 when none.
	epAxis, rowAxis int
	// seq: sequence parallel, the activations between the tensor-
	// parallel regions split on their sequence dim along mpAxis.
	seq   bool
	dists map[string]*ir.TensorDist
	// ops holds the seeded op dists, by op id.
	ops map[int64]*ir.OpDist
	// edges holds, by op id, the args a seeded op reads in another
	// mapping than their var's: the reshards completion may list (the
	// sequence-parallel strategies').
	edges map[int64][]string
	// forwardOnly keeps completion's dists of the forward ops and the
	// vars they touch only, for a later completion to derive the rest.
	forwardOnly bool
	errs        []error
}

// tokenMeshName names the 1-D mesh of the tokens under "dp,ep".
const tokenMeshName = "tokens"

// newAnnotator checks strategy (one of known; what names the family in
// the message) and mesh against the module.
func newAnnotator(m *ir.Module, strategy string, mesh *ir.ProcessMesh, known []string, what string) (*annotator, error) {
	if !slices.Contains(known, strategy) {
		return nil, fmt.Errorf("unknown %sstrategy %q (want %s)", what, strategy, strings.Join(known, ", "))
	}
	if mesh == nil || mesh.Name == "" {
		return nil, errors.New("annotate: a named mesh is required")
	}
	a := &annotator{m: m, strategy: strategy, mesh: mesh, dpAxis: -1, mpAxis: -1, epAxis: -1, rowAxis: -1,
		dists: map[string]*ir.TensorDist{}, ops: map[int64]*ir.OpDist{}}
	for _, want := range strings.Split(strategy, ",") {
		if want == "sp" { // along mp: no mesh dim of its own
			a.seq = true
			continue
		}
		i := slices.Index(mesh.DimNames, want)
		if i < 0 {
			return nil, fmt.Errorf("strategy %s needs a mesh dim named %s; mesh %s has dims [%s]",
				strategy, want, mesh.Name, strings.Join(mesh.DimNames, ", "))
		}
		switch want {
		case "dp":
			a.dpAxis = i
		case "mp":
			a.mpAxis = i
		case "ep":
			a.epAxis = i
		}
	}
	if a.seq && a.mpAxis < 0 {
		return nil, fmt.Errorf("strategy %s: sequence parallelism splits along mp, which it lacks", strategy)
	}
	if a.epAxis >= 0 {
		a.expert = mesh
		if a.dpAxis < 0 { // "ep": the tokens' batch is split along ep
			a.dpAxis = a.epAxis
		} else { // "dp,ep": over every rank, on a 1-D view
			a.rowAxis = a.dpAxis
			a.mesh = &ir.ProcessMesh{Name: tokenMeshName, Shape: []int{len(mesh.ProcessIDs)},
				DimNames: []string{"dp_ep"}, ProcessIDs: slices.Clone(mesh.ProcessIDs)}
			a.dpAxis = 0
		}
	}
	for _, pm := range []*ir.ProcessMesh{mesh, a.mesh} {
		old := m.Mesh(pm.Name)
		switch {
		case old != nil && !meshEqual(old, pm):
			return nil, fmt.Errorf("annotate: the module already has a different mesh %s", pm.Name)
		case old == nil && !slices.ContainsFunc(a.meshes, func(x *ir.ProcessMesh) bool { return x.Name == pm.Name }):
			a.meshes = append(a.meshes, cloneMesh(pm))
		}
	}
	if m.Main == nil || len(m.Main.Blocks) != 1 {
		return nil, errors.New("annotate: the module must have a main program of one block")
	}
	a.g = m.Main.Global()
	return a, nil
}

func (a *annotator) fail(format string, args ...any) {
	a.errs = append(a.errs, fmt.Errorf(format, args...))
}

// set gives var name a mapping on the tokens' mesh; a second set must
// agree.
func (a *annotator) set(name string, mapping []int, partial ...ir.Partial) {
	a.setOn(a.mesh, name, mapping, partial...)
}

// setOn is set on mesh pm.
func (a *annotator) setOn(pm *ir.ProcessMesh, name string, mapping []int, partial ...ir.Partial) {
	if old, ok := a.dists[name]; ok {
		if !slices.Equal(old.DimsMapping, mapping) || old.Mesh != pm.Name {
			a.fail("var %s: needs dims_mapping %v on %s and %v on %s", name, old.DimsMapping, old.Mesh, mapping, pm.Name)
		}
		return
	}
	a.dists[name] = &ir.TensorDist{Mesh: pm.Name, DimsMapping: mapping, Partial: partial}
}

// dataVars maps the batch dim (dim 0) of every data var not yet mapped
// on dp, its other dims replicated.
func (a *annotator) dataVars() {
	for _, v := range a.g.Vars() {
		if _, ok := a.dists[v.Name()]; ok || !v.Has(ir.FlagIsData) || !v.Type.IsTensor() {
			continue
		}
		a.set(v.Name(), a.batchMapping(v.Type.Rank()))
	}
}

// batchMapping is a mapping of rank n with dim 0 on dp, the rest
// replicated.
func (a *annotator) batchMapping(n int) []int {
	mp := replicated(n)
	if n > 0 {
		mp[0] = a.dpAxis
	}
	return mp
}

func replicated(n int) []int {
	mp := make([]int, n)
	for i := range mp {
		mp[i] = -1
	}
	return mp
}

// forwardOps lists the forward ops of block 0 (grad ops excluded).
func (a *annotator) forwardOps() []*ir.Op {
	var ops []*ir.Op
	for _, op := range a.g.Ops {
		if isForward(op) {
			ops = append(ops, op)
		}
	}
	return ops
}

// isParam reports whether name is a param of main's block 0.
func (a *annotator) isParam(name string) bool {
	v := a.g.Var(name)
	return v != nil && v.Kind == ir.KindParam
}

// seedParams replicates every param without a seed on the tokens' mesh.
func (a *annotator) seedParams() {
	for _, v := range a.g.Vars() {
		if _, ok := a.dists[v.Name()]; !ok && v.Kind == ir.KindParam && v.Type.IsTensor() {
			a.set(v.Name(), replicated(v.Type.Rank()))
		}
	}
}

// complete checks the seeds (even splits, startup vars main declares),
// then completes a copy of the module from them alone (every other dist
// dropped) and, when completion found nothing to refuse, gives the
// module the copy's dists and meshes: on error it is unchanged.
func (a *annotator) complete() error {
	byName := map[string]*ir.ProcessMesh{}
	for _, pm := range append(slices.Clone(a.m.Meshes), a.meshes...) {
		byName[pm.Name] = pm
	}
	uneven := func(v string, dim int, size int64, pm *ir.ProcessMesh, ax int) {
		a.fail("var %s: dim %d of size %d does not split evenly over mesh dim %s of size %d", v, dim, size, pm.DimNames[ax], pm.Shape[ax])
	}
	for _, v := range a.g.Vars() {
		d, ok := a.dists[v.Name()]
		if !ok {
			continue
		}
		for i, ax := range d.DimsMapping {
			if pm := byName[d.Mesh]; ax >= 0 && i < v.Type.Rank() && v.Type.Shape[i] >= 0 && v.Type.Shape[i]%int64(pm.Shape[ax]) != 0 {
				uneven(v.Name(), i, v.Type.Shape[i], pm, ax)
			}
		}
	}
	if a.m.Startup != nil {
		for _, b := range a.m.Startup.Blocks {
			for _, v := range b.Vars() {
				if v.Type.IsTensor() && a.g.Var(v.Name()) == nil {
					a.fail("startup var %s: main's block 0 has no var of that name", v.Name())
				}
			}
		}
	}
	if err := errors.Join(a.errs...); err != nil {
		return fmt.Errorf("annotate %s: %w", a.strategy, err)
	}

	c := a.m.Clone()
	for _, pm := range a.meshes {
		c.Meshes = append(c.Meshes, cloneMesh(pm))
	}
	for _, p := range c.Programs() {
		for _, b := range p.Blocks {
			if b == nil {
				continue
			}
			for _, v := range b.Vars() {
				v.Dist = nil
			}
			for _, op := range b.Ops {
				op.Dist = nil
			}
		}
	}
	g := c.Main.Global()
	for name, d := range a.dists {
		if v := g.Var(name); v != nil {
			v.Dist = d.Clone()
		}
	}
	for _, op := range g.Ops {
		op.Dist = a.ops[op.ID].Clone()
	}
	rep, err := complete.Complete(c, complete.Options{})
	if err != nil {
		return fmt.Errorf("annotate %s: %w", a.strategy, err)
	}
	// kept: the ops whose dists the module takes, all but with
	// forwardOnly.
	forward := map[int64]bool{}
	for _, op := range a.forwardOps() {
		forward[op.ID] = true
	}
	kept := func(op int64) bool { return !a.forwardOnly || forward[op] }
	for _, u := range rep.Uneven {
		if v := g.Var(u.Var); v != nil && v.Dist != nil {
			uneven(u.Var, u.Dim, u.Size, byName[v.Dist.Mesh], u.MeshDim)
		}
	}
	for _, x := range rep.Conflicts {
		if !kept(x.Op) {
			continue
		}
		a.fail("op %d %s: var %s dim %d: mesh dim %d (from %s) conflicts with %d (from %s)", x.Op, x.OpType, x.Var, x.Dim, x.Lost, x.LostFrom, x.Kept, x.KeptFrom)
	}
	for _, bs := range [][]complete.Barrier{rep.RuleConflicts, rep.RuleErrors, rep.Fallbacks} {
		for _, b := range bs {
			if !kept(b.Op) {
				continue
			}
			a.fail("op %d %s: %s", b.Op, b.OpType, b.Why)
		}
	}
	for _, r := range rep.Reshards {
		if !kept(r.Op) || !r.Output && slices.Contains(a.edges[r.Op], r.Var) {
			continue
		}
		a.fail("op %d %s: %s would need a reshard from %s to %s", r.Op, r.OpType, r.Var, ir.FormatInts(r.Have), ir.FormatInts(r.Want))
	}
	if err := errors.Join(a.errs...); err != nil {
		return fmt.Errorf("annotate %s: completing from its seeds: %w", a.strategy, err)
	}
	var touched map[string]bool // with forwardOnly, the forward ops' args
	if a.forwardOnly {
		touched = map[string]bool{}
		for _, op := range a.forwardOps() {
			for name := range op.InputNames {
				touched[name] = true
			}
			for name := range op.OutputNames {
				touched[name] = true
			}
		}
	}
	for _, pm := range a.meshes {
		a.m.Meshes = append(a.m.Meshes, cloneMesh(pm))
	}
	cp := c.Programs()
	for pi, p := range a.m.Programs() {
		for bi, b := range p.Blocks {
			if b == nil {
				continue
			}
			cb := cp[pi].Blocks[bi]
			for _, v := range b.Vars() {
				if touched == nil || touched[v.Name()] {
					v.Dist = cb.Var(v.Name()).Dist
				}
			}
			for i, op := range b.Ops {
				if p != a.m.Main || kept(op.ID) {
					op.Dist = cb.Ops[i].Dist
				}
			}
		}
	}
	return nil
}

// isForward reports whether op is a forward op (not a grad op).
func isForward(op *ir.Op) bool { return op.Fwd == 0 && op.Role.IsForward() }

func meshEqual(a, b *ir.ProcessMesh) bool {
	return a.Name == b.Name && slices.Equal(a.Shape, b.Shape) &&
		slices.Equal(a.DimNames, b.DimNames) && slices.Equal(a.ProcessIDs, b.ProcessIDs)
}

func cloneMesh(pm *ir.ProcessMesh) *ir.ProcessMesh {
	return &ir.ProcessMesh{Name: pm.Name, Shape: slices.Clone(pm.Shape),
		DimNames: slices.Clone(pm.DimNames), ProcessIDs: slices.Clone(pm.ProcessIDs)}
}

// Mesh returns a mesh named "world" of the given shape and dim names over
// ranks 0..n-1.
func Mesh(shape []int, dims []string) *ir.ProcessMesh {
	n := 1
	for _, s := range shape {
		n *= s
	}
	ranks := make([]int, n)
	for i := range ranks {
		ranks[i] = i
	}
	return &ir.ProcessMesh{Name: "world", Shape: slices.Clone(shape), DimNames: slices.Clone(dims), ProcessIDs: ranks}
}
