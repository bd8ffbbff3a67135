package models

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
)

// Strategies lists the strategies Annotate knows.
var Strategies = []string{"dp", "mp", "dp,mp"}

// impl is an op's dist-op implementation.
type impl struct {
	typ   string
	index int
}

// Annotate gives every var and op of main's block 0 of an MLP-shaped
// module (MLP's ops, with or without their grad ops) a distribution on
// mesh for strategy, and adds mesh to the module (a mesh of the same
// name already there must be equal). Startup vars take the dist of
// main's var of the same name. On error the module is left unchanged.
//
// The strategies, with dp and mp the mesh dims of those names:
//
//   - "dp": data parallel. Data vars have their batch dim (dim 0) on dp,
//     activations [dp, -1], params replicated; every op uses impl
//     default:0 (a 2-D X split on its rows fits none of matmul_v2's
//     impls, which is where Paddle falls back to the default impl too).
//   - "mp": Megatron tensor parallel, layers in pairs. The first of a
//     pair is column-parallel: w [-1, mp], b [mp], matmul_v2:0, its
//     activations [-1, mp]; the second row-parallel: w [mp, -1], b [-1],
//     matmul_v2:1, its activations [-1, -1]. elementwise_add and relu use
//     elementwise:0, mean default:0. mean needs its input replicated
//     along mp, so the layer count must be even (an error otherwise).
//   - "dp,mp": both, on a mesh with dims dp and mp: activations [dp, …]
//     with the mp strategy's last dim.
//
// The loss is a scalar ([]), partial [dp:avg] when the batch is split
// (each rank holds the mean of its shard). A grad var <v>@GRAD takes v's
// mapping without the partial; a grad op takes its forward op's impl; any
// other op without a forward op (the loss-grad fill_constant, optimizer
// ops) default:0.
func Annotate(m *ir.Module, strategy string, mesh *ir.ProcessMesh) error {
	a, err := newAnnotator(m, strategy, mesh, Strategies, "")
	if err != nil {
		return err
	}
	g, mpAxis := a.g, a.mpAxis
	set, get, fail := a.set, a.get, a.fail
	dists, impls := a.dists, a.impls
	a.dataVars()
	elementwise := a.elementwiseImpl()
	layer := 0
	for _, op := range a.forwardOps() {
		ins := func(slot string) string { return a.in(op, slot) }
		out := a.out(op, "Out")
		if out == "" {
			continue
		}
		switch op.Type {
		case "matmul_v2":
			x, y := ins("X"), ins("Y")
			xm := get(op, x)
			if len(xm) != 2 {
				fail("%s: X %s must be 2-D", op, x)
				continue
			}
			switch {
			case mpAxis < 0:
				set(y, []int{-1, -1})
				set(out, []int{xm[0], -1})
				impls[op.ID] = impl{"default", 0}
			case layer%2 == 0: // column-parallel
				if xm[1] != -1 {
					fail("%s: column-parallel layer %d needs X %s replicated along its last dim", op, layer, x)
				}
				set(y, []int{-1, mpAxis})
				set(out, []int{xm[0], mpAxis})
				impls[op.ID] = impl{"matmul_v2", 0}
			default: // row-parallel
				if xm[1] != mpAxis {
					fail("%s: row-parallel layer %d needs X %s split along mp on its last dim", op, layer, x)
				}
				set(y, []int{mpAxis, -1})
				set(out, []int{xm[0], -1})
				impls[op.ID] = impl{"matmul_v2", 1}
			}
			layer++
		case "elementwise_add":
			x, y := ins("X"), ins("Y")
			xm := get(op, x)
			if _, ok := dists[y]; !ok {
				yv := g.Var(y)
				if yv == nil || yv.Type.Rank() > len(xm) {
					fail("%s: Y %s must not have more dims than X", op, y)
					continue
				}
				set(y, slices.Clone(xm[len(xm)-yv.Type.Rank():]))
			}
			set(out, slices.Clone(xm))
			impls[op.ID] = elementwise
		case "relu":
			set(out, slices.Clone(get(op, ins("X"))))
			impls[op.ID] = elementwise
		case "mean":
			xm := get(op, ins("X"))
			if mpAxis >= 0 && slices.Contains(xm, mpAxis) {
				if layer%2 == 0 { // an odd count is reported below
					fail("%s: the loss input must be replicated along mp", op)
				}
				continue
			}
			a.meanLoss(op, out, xm)
		default:
			fail("%s: the MLP strategies do not know this op type", op)
		}
	}
	if mpAxis >= 0 && layer%2 != 0 {
		fail("strategy %s needs an even number of layers (column- then row-parallel pairs, so that the loss input is replicated along mp), have %d", strategy, layer)
	}
	return a.finish()
}

// annotator holds the dists and impls a strategy gives a module's vars
// and ops while it is being annotated; finish checks and applies them.
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
	seq    bool
	dists  map[string]*ir.TensorDist
	impls  map[int64]impl
	opMesh map[int64]string // ops not on mesh
	// reads holds, by op id, the args an op requires in another mapping
	// than their var's dist: insert-reshards makes those moves explicit.
	reads map[int64]map[string][]int
	// forwardOnly leaves grad vars and every op but the forward ones
	// without a dist, for completion to derive.
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
		dists: map[string]*ir.TensorDist{}, impls: map[int64]impl{}, opMesh: map[int64]string{}, reads: map[int64]map[string][]int{}}
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

// get returns the mapping of op's input name, set by an earlier op.
func (a *annotator) get(op *ir.Op, name string) []int {
	d, ok := a.dists[name]
	if !ok {
		a.fail("%s: input %s has no dist yet", op, name)
		return nil
	}
	return d.DimsMapping
}

// in and out return the one arg of an input or output slot ("" and an
// error when there is not exactly one).
func (a *annotator) in(op *ir.Op, slot string) string {
	if s := op.Input(slot); len(s) == 1 {
		return s[0]
	}
	a.fail("%s: want one %s input", op, slot)
	return ""
}

func (a *annotator) out(op *ir.Op, slot string) string {
	if s := op.Output(slot); len(s) == 1 {
		return s[0]
	}
	a.fail("%s: want one %s output", op, slot)
	return ""
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

// elementwiseImpl is the impl of elementwise ops: default:0 without mp,
// elementwise:0 with it.
func (a *annotator) elementwiseImpl() impl {
	if a.mpAxis >= 0 {
		return impl{"elementwise", 0}
	}
	return impl{"default", 0}
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

// meanLoss maps the scalar loss out of a mean over X mapped xm: partial
// [dp:avg] when the batch is split; the op uses default:0.
func (a *annotator) meanLoss(op *ir.Op, out string, xm []int) {
	var partial []ir.Partial
	if len(xm) > 0 && xm[0] >= 0 {
		partial = []ir.Partial{{Dim: xm[0], Reduce: ir.ReduceAvg}}
	}
	a.set(out, []int{}, partial...)
	a.impls[op.ID] = impl{"default", 0}
}

// finish gives grad ops their forward op's impl and other unannotated ops
// default:0, grad vars (v@GRAD and its parts v@GRAD@RENAME@k) v's mapping
// without partial, checks even splits and startup vars, and applies the
// dists when nothing failed (the module is unchanged otherwise).
func (a *annotator) finish() error {
	g, dists, impls := a.g, a.dists, a.impls
	byName := map[string]*ir.ProcessMesh{}
	for _, pm := range append(slices.Clone(a.m.Meshes), a.meshes...) {
		byName[pm.Name] = pm
	}
	for _, op := range g.Ops {
		if _, ok := impls[op.ID]; ok || a.forwardOnly && !isForward(op) {
			continue
		}
		if op.Fwd != 0 {
			im, ok := impls[op.Fwd]
			if !ok {
				a.fail("%s: its forward op %d has no impl", op, op.Fwd)
			}
			impls[op.ID] = im
			continue
		}
		impls[op.ID] = impl{"default", 0}
	}
	fwdArgs := map[string]bool{}
	if a.forwardOnly {
		for _, op := range a.forwardOps() {
			for name := range op.InputNames {
				fwdArgs[name] = true
			}
			for name := range op.OutputNames {
				fwdArgs[name] = true
			}
		}
	}
	for _, v := range g.Vars() {
		if _, ok := dists[v.Name()]; ok || !v.Type.IsTensor() || a.forwardOnly && !fwdArgs[v.Name()] {
			continue
		}
		if i := strings.Index(v.Name(), "@GRAD"); i > 0 {
			if d, ok := dists[v.Name()[:i]]; ok {
				a.setOn(byName[d.Mesh], v.Name(), slices.Clone(d.DimsMapping))
				continue
			}
		}
		a.fail("var %s: strategy %s does not know how to distribute it", v.Name(), a.strategy)
	}
	// Even splits.
	for _, v := range g.Vars() {
		d, ok := dists[v.Name()]
		if !ok {
			continue
		}
		pm := byName[d.Mesh]
		for i, ax := range d.DimsMapping {
			if ax >= 0 && i < v.Type.Rank() && v.Type.Shape[i] >= 0 && v.Type.Shape[i]%int64(pm.Shape[ax]) != 0 {
				a.fail("var %s: dim %d of size %d does not split evenly over mesh dim %s of size %d",
					v.Name(), i, v.Type.Shape[i], pm.DimNames[ax], pm.Shape[ax])
			}
		}
	}
	// Op meshes: set, or the forward op's, or the first output's (the
	// loss grad, grad sums, optimizer ops), or the tokens'. An arg of
	// another mesh must be replicated: nothing reshards between meshes.
	meshOf := func(op *ir.Op) string {
		if pm, ok := a.opMesh[op.ID]; ok {
			return pm
		}
		if op.Fwd != 0 {
			if pm, ok := a.opMesh[op.Fwd]; ok {
				return pm
			}
		}
		for _, slots := range [2][]ir.Slot{op.Outputs, op.Inputs} {
			for _, s := range slots {
				for _, arg := range s.Args {
					if d := dists[arg]; d != nil {
						return d.Mesh
					}
				}
			}
		}
		return a.mesh.Name
	}
	for _, op := range g.Ops {
		a.opMesh[op.ID] = meshOf(op)
	}
	for _, op := range g.Ops {
		pm := a.opMesh[op.ID]
		for _, slots := range [2][]ir.Slot{op.Inputs, op.Outputs} {
			for _, s := range slots {
				for _, arg := range s.Args {
					if d := dists[arg]; d != nil && d.Mesh != pm && slices.ContainsFunc(d.DimsMapping, func(x int) bool { return x >= 0 }) {
						a.fail("%s on mesh %s: %s lives on mesh %s with dims_mapping %v; only replicated args cross meshes",
							op, pm, arg, d.Mesh, d.DimsMapping)
					}
				}
			}
		}
	}
	m := a.m
	if m.Startup != nil {
		for _, b := range m.Startup.Blocks {
			for _, v := range b.Vars() {
				if _, ok := dists[v.Name()]; !ok && v.Type.IsTensor() && !(a.forwardOnly && g.Var(v.Name()) != nil) {
					a.fail("startup var %s: main's block 0 has no var of that name", v.Name())
				}
			}
		}
	}
	if err := errors.Join(a.errs...); err != nil {
		return fmt.Errorf("annotate %s: %w", a.strategy, err)
	}

	// Apply.
	m.Meshes = append(m.Meshes, a.meshes...)
	for _, v := range g.Vars() {
		if d, ok := dists[v.Name()]; ok {
			v.Dist = d.Clone()
		}
	}
	if m.Startup != nil {
		for _, b := range m.Startup.Blocks {
			for _, v := range b.Vars() {
				if d, ok := dists[v.Name()]; ok {
					v.Dist = &ir.TensorDist{Mesh: d.Mesh, DimsMapping: slices.Clone(d.DimsMapping)}
				}
			}
		}
	}
	for _, op := range g.Ops {
		im, ok := impls[op.ID]
		if !ok {
			continue // forwardOnly: completion's
		}
		reads := a.reads[op.ID]
		op.Dist = &ir.OpDist{
			Mesh: a.opMesh[op.ID], ImplType: im.typ, ImplIndex: im.index,
			Inputs: argDists(op.Inputs, dists, reads), Outputs: argDists(op.Outputs, dists, nil),
		}
	}
	return nil
}

// isForward reports whether op is a forward op (not a grad op).
func isForward(op *ir.Op) bool { return op.Fwd == 0 && op.Role.IsForward() }

// argDists lists the mappings of the args of slots: reads' where it
// has one, else the var's dist's.
func argDists(slots []ir.Slot, dists map[string]*ir.TensorDist, reads map[string][]int) []ir.ArgDist {
	var out []ir.ArgDist
	for _, s := range slots {
		for _, a := range s.Args {
			if m, ok := reads[a]; ok {
				out = append(out, ir.ArgDist{Name: a, DimsMapping: slices.Clone(m)})
			} else if d := dists[a]; d != nil {
				out = append(out, ir.ArgDist{Name: a, DimsMapping: slices.Clone(d.DimsMapping)})
			}
		}
	}
	return out
}

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
