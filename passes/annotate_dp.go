package passes

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/ops"
)

// AnnotateDataParallelPass is data-parallel annotation: the batch dim
// of the data split along one mesh dim, then complete.
func AnnotateDataParallelPass() *Pass {
	return &Pass{
		Name: "annotate-data-parallel",
		Doc: `annotate an unannotated module for data parallelism
The batch dim (dim 0) of every data var (is_data, or written by a feed
op) is split along the mesh dim axis (but a data var of one row beside
data of more: a single target for a model whose output folds the batch
stays whole), its other dims replicated; then complete infers every
other var's and op's dist and impl from those alone, by the op table's
sharding rules (the same completion as the complete pass): the batch
follows through the ops that keep it, an XShape holds it in dim 1,
v@GRAD takes v's mapping, params are replicated, and a loss read from
batch-split vars is partial over axis. Ops that do not run on batch
shards alone are refused, each named: a reduce op whose dims include
0, a reshape2 that does not keep dim 0, a transpose2 that moves it, a
flatten that folds it (their attrs say so; completion's rules cannot
tell a reshape of an unknown batch that keeps it), an op that reads the
batch and writes a non-persistable tensor without it (a reduction over
the batch; but the loss), an op without a sharding rule, and an op
completion would reshard an arg for (a softmax over the batch reads it
whole); and, when no op is
refused so, any reshard, conflict, rule conflict or error, or fallback
completion reports: data parallelism moves no activations. A training
batch_norm (not is_test, not use_global_stats) on the batch gets, with
batch-norm=sync (the default), impl batch_norm:0: sync_batch_norm, its
statistics all-reduced over axis, the serial program's, which check
compares with the serial program; with batch-norm=local, impl
default:0: Paddle's batch_norm, each rank's statistics its shard's,
which check compares with the serial program run on each rank's shard
(complete would pick batch_norm:0 for it, so each such op is annotated
first with the op dist complete infers for it, found by completing a
copy of the module, but impl default:0, which complete then keeps).
With data-only=true only the data vars are annotated (and, with
batch-norm=local, the training batch_norms), other vars may have dists
already (a weight split for tensor parallelism; a data var with a dist
is refused), and no op is refused: run complete after it (after
append-optimizer, say) to infer the rest.
The mesh is mesh=NAME
(declared, with a dim named axis) or shape=N (a new 1-D mesh "world" of
N ranks 0..N-1 whose dim is axis; N is at most ir.MaxMeshRanks).
Without data-only, a module with dists is refused.`,
		Options: []Option{
			{Name: "mesh", Kind: OptString, Default: "", Doc: "the declared mesh to use"},
			{Name: "shape", Kind: OptInt, Default: "0", Doc: "the rank count of a new 1-D mesh named world (0: none)",
				Range: &Range{Min: 0, Max: ir.MaxMeshRanks}},
			{Name: "axis", Kind: OptString, Default: "dp", Doc: "the mesh dim to split the batch along"},
			{Name: "batch-norm", Kind: OptString, Default: "sync", Doc: "training batch_norm's statistics: sync (the whole batch's, as serial) or local (each rank's shard's, Paddle's default)",
				Values: []string{"sync", "local"}},
			{Name: "data-only", Kind: OptBool, Default: "false", Doc: "annotate the data vars only, for complete to infer the rest"},
		},
		Run: func(ctx *Context, m *ir.Module) error {
			return AnnotateDataParallelWith(m, DataParallelOptions{Mesh: ctx.String("mesh"), Shape: int(ctx.Int("shape")),
				Axis: ctx.String("axis"), BatchNorm: ctx.String("batch-norm"), DataOnly: ctx.Bool("data-only")})
		},
	}
}

// AnnotateDataParallel is the annotate-data-parallel pass with
// batch-norm=sync: see its Doc; shape 0 means no shape=N. On error the
// module is unchanged.
func AnnotateDataParallel(m *ir.Module, meshName string, shape int, axisName string) error {
	return AnnotateDataParallelWith(m, DataParallelOptions{Mesh: meshName, Shape: shape, Axis: axisName})
}

// DataParallelOptions are annotate-data-parallel's options.
type DataParallelOptions struct {
	Mesh  string // a declared mesh, or "" with Shape
	Shape int    // the rank count of a new 1-D mesh "world"; 0: none
	Axis  string // the mesh dim the batch is split along
	// BatchNorm is a training batch_norm's statistics: "sync" ("" too)
	// or "local".
	BatchNorm string
	// DataOnly annotates the data vars alone, for complete.
	DataOnly bool
}

// AnnotateDataParallelWith is the annotate-data-parallel pass: see its
// Doc. On error the module is unchanged.
//
// sync is the default, unlike Paddle's: a partition is meant to compute
// what the serial program does, and sync_batch_norm does; local batch
// norm computes something else (each rank's statistics are its
// shard's), which check can only hold to the serial program run per
// shard. It is there for the programs Paddle runs by default.
func AnnotateDataParallelWith(m *ir.Module, o DataParallelOptions) error {
	meshName, shape, axisName, bn := o.Mesh, o.Shape, o.Axis, o.BatchNorm
	if bn == "" {
		bn = "sync"
	}
	if bn != "sync" && bn != "local" {
		return fmt.Errorf("batch-norm=%q: want sync or local", bn)
	}
	if m.Main == nil || len(m.Main.Blocks) == 0 {
		return errors.New("no main program")
	}
	pm, newMesh, err := dpMesh(m, meshName, shape, axisName)
	if err != nil {
		return err
	}
	axis := pm.DimIndex(axisName)
	for _, p := range m.Programs() {
		if o.DataOnly {
			break // the data vars are checked below
		}
		for _, b := range p.Blocks {
			for _, v := range b.Vars() {
				if v.Dist != nil {
					return fmt.Errorf("%s block %d: var %s already has a dist: annotate-data-parallel annotates unannotated modules", p.Name, b.Index, v.Name())
				}
			}
			for _, op := range b.Ops {
				if op.Dist != nil {
					return fmt.Errorf("%s block %d: %s already has a dist: annotate-data-parallel annotates unannotated modules", p.Name, b.Index, op)
				}
			}
		}
	}
	a := &dpAnnotator{m: m, p: m.Main, batch: map[string]bool{}}
	if err := a.seed(); err != nil {
		return err
	}
	if o.DataOnly {
		for _, b := range a.p.Blocks {
			for _, v := range b.Vars() {
				if a.batch[v.Name()] && v.Dist != nil {
					return fmt.Errorf("data var %s already has a dist (%s)", v.Name(), v.Dist)
				}
			}
		}
		if bn == "local" {
			return a.annotateDataLocalBN(pm, newMesh, axis)
		}
		return a.annotateData(pm, newMesh, axis)
	}

	// The data vars, then complete, on a copy: the module is unchanged
	// on error.
	c := m.Clone()
	ca := &dpAnnotator{m: c, p: c.Main, batch: a.batch, size: a.size}
	cpm := c.Mesh(pm.Name)
	if newMesh {
		cpm = cloneMesh(pm)
	}
	if bn == "local" {
		err = ca.annotateDataLocalBN(cpm, newMesh, axis)
	} else {
		err = ca.annotateData(cpm, newMesh, axis)
	}
	if err != nil {
		return err
	}
	rep, err := complete.Complete(c, complete.Options{})
	if err != nil {
		return err
	}
	ca.refuse(rep, axis)
	if err := errors.Join(ca.errs...); err != nil {
		return err
	}
	if newMesh {
		m.Meshes = append(m.Meshes, pm)
	}
	for pi, p := range m.Programs() {
		cp := c.Programs()[pi]
		for bi, b := range p.Blocks {
			if b == nil {
				continue
			}
			for _, v := range b.Vars() {
				v.Dist = cp.Blocks[bi].Var(v.Name()).Dist
			}
			for i, op := range b.Ops {
				op.Dist = cp.Blocks[bi].Ops[i].Dist
			}
		}
	}
	return nil
}

// refuse names, in a completed module, each forward op that does not
// keep the batch where it is, once: an op that reads a var split on dim
// 0 along axis and moves that dim (movesBatch: what the op's attrs say,
// as completion's rules cannot tell a reshape of an unknown batch that
// keeps it from one that does not), has no sharding rule (a barrier:
// nothing proves it computes on batch shards), reads an arg another way than its
// var is split (completion would reshard it: the op does not compute on
// batch shards alone), or writes a non-persistable tensor without the
// batch (a reduction over it; but the loss, partial over it). Failing
// those, any op completion would have to move data for: a reshard, a
// conflict, a rule it could not follow. Data parallelism moves no
// activations, so each is refused rather than left to insert-reshards.
func (a *dpAnnotator) refuse(rep *complete.Report, axis int) {
	split := func(v *ir.Var) bool {
		return v != nil && v.Dist != nil && len(v.Dist.DimsMapping) > 0 && v.Dist.DimsMapping[0] == axis &&
			!slices.ContainsFunc(v.Dist.Partial, func(p ir.Partial) bool { return p.Dim == axis })
	}
	reshards := map[int64][]complete.Reshard{}
	for _, r := range rep.Reshards {
		if !r.Output {
			reshards[r.Op] = append(reshards[r.Op], r)
		}
	}
	barrier := map[int64]string{}
	for _, x := range rep.Barriers {
		barrier[x.Op] = x.Why
	}
	// refused holds what refused ops write: a reshard of it follows from
	// the refusal, and names nothing new.
	refused := map[string]bool{}
	fail := func(b *ir.Block, op *ir.Op, format string, args ...any) {
		a.fail(b, op, format, args...)
		for out := range op.OutputNames {
			refused[out] = true
		}
	}
	for _, b := range a.p.Blocks {
		for _, op := range b.Ops {
			if op.Type == "feed" || op.Type == "fetch" || op.Role.IsBackward() || op.Role.IsOptimize() {
				continue
			}
			reads := false
			for in := range op.InputNames {
				reads = reads || split(a.p.LookupVar(b, in))
			}
			if !reads {
				continue
			}
			if why := a.movesBatch(b, op); why != "" {
				fail(b, op, "not provably batch-parallel: %s", why)
				continue
			}
			if why, ok := barrier[op.ID]; ok {
				fail(b, op, "not provably batch-parallel: %s: completion replicates its args", why)
				continue
			}
			if i := slices.IndexFunc(reshards[op.ID], func(r complete.Reshard) bool { return !refused[r.Var] }); i >= 0 {
				r := reshards[op.ID][i]
				fail(b, op, "not provably batch-parallel: completion would reshard %s from %s to %s: the op does not compute on batch shards alone",
					r.Var, ir.FormatInts(r.Have), ir.FormatInts(r.Want))
				continue
			}
			if why := a.dropsBatch(b, op, split); why != "" {
				fail(b, op, "not provably batch-parallel: %s", why)
			}
		}
	}
	if len(a.errs) > 0 {
		return
	}
	named := func(id int64) string {
		for _, b := range a.p.Blocks {
			for _, op := range b.Ops {
				if op.ID == id {
					return op.String()
				}
			}
		}
		return fmt.Sprintf("op %d", id)
	}
	for _, r := range rep.Reshards {
		a.errs = append(a.errs, fmt.Errorf("%s: not provably batch-parallel: completion would reshard %s from %s to %s",
			named(r.Op), r.Var, ir.FormatInts(r.Have), ir.FormatInts(r.Want)))
	}
	for _, x := range rep.Conflicts {
		a.errs = append(a.errs, fmt.Errorf("%s: not provably batch-parallel: %s dim %d is split along mesh dim %d (from %s) and %d (from %s)",
			named(x.Op), x.Var, x.Dim, x.Kept, x.KeptFrom, x.Lost, x.LostFrom))
	}
	for _, bs := range [][]complete.Barrier{rep.RuleConflicts, rep.RuleErrors, rep.Fallbacks} {
		for _, x := range bs {
			a.errs = append(a.errs, fmt.Errorf("%s: not provably batch-parallel: %s", named(x.Op), x.Why))
		}
	}
}

// dropsBatch says which non-persistable tensor op writes without the
// batch split on its dim 0, or "". batch_norm's statistics are per
// channel, an XShape holds the batch in dim 1, and the loss is partial
// over it.
func (a *dpAnnotator) dropsBatch(b *ir.Block, op *ir.Op, split func(*ir.Var) bool) string {
	if op.Role.IsLoss() {
		return ""
	}
	for _, s := range op.Outputs {
		if op.Type == "batch_norm" && s.Name != "Y" || s.Name == "XShape" {
			continue
		}
		for _, out := range s.Args {
			v := a.p.LookupVar(b, out)
			if v == nil || !v.Type.IsTensor() || v.Persistable() || split(v) {
				continue
			}
			if v.Type.Rank() > 0 && v.Type.Shape[0] == a.size {
				return fmt.Sprintf("it reads the batch and writes %s %s, which completion does not split on dim 0 (%s)",
					out, fmtShape(v.Type.Shape), v.Dist)
			}
			return fmt.Sprintf("it reads the batch and writes %s %s, whose dim 0 is not the batch size %d (a reduction over the batch?)",
				out, fmtShape(v.Type.Shape), a.size)
		}
	}
	return ""
}

func cloneMesh(pm *ir.ProcessMesh) *ir.ProcessMesh {
	return &ir.ProcessMesh{Name: pm.Name, Shape: slices.Clone(pm.Shape), DimNames: slices.Clone(pm.DimNames), ProcessIDs: slices.Clone(pm.ProcessIDs)}
}

// annotateData gives the data vars (the seeds) their dists and nothing
// else a dist.
func (a *dpAnnotator) annotateData(pm *ir.ProcessMesh, newMesh bool, axis int) error {
	if a.size > 0 && a.size%int64(pm.Shape[axis]) != 0 {
		return fmt.Errorf("the batch size %d does not split evenly over mesh dim %s of size %d", a.size, pm.DimNames[axis], pm.Shape[axis])
	}
	if newMesh {
		a.m.Meshes = append(a.m.Meshes, pm)
	}
	for _, b := range a.p.Blocks {
		for _, v := range b.Vars() {
			if !a.batch[v.Name()] {
				continue
			}
			mp := slices.Repeat([]int{-1}, v.Type.Rank())
			mp[0] = axis
			v.Dist = &ir.TensorDist{Mesh: pm.Name, DimsMapping: mp}
		}
	}
	return nil
}

// annotateDataLocalBN is annotateData with batch-norm=local. complete,
// which infers the rest, gives a training batch_norm on a batch it
// splits impl batch_norm:0, sync_batch_norm; to keep each rank's
// statistics its shard's, each such op gets the op dist complete infers
// for it, found by completing a copy of the annotated module, with impl
// default:0 (Paddle's batch_norm), and complete keeps an annotated op's
// dist. On error the module is unchanged.
func (a *dpAnnotator) annotateDataLocalBN(pm *ir.ProcessMesh, newMesh bool, axis int) error {
	training := false
	for _, b := range a.p.Blocks {
		training = training || slices.ContainsFunc(b.Ops, trainingBN)
	}
	if !training {
		return a.annotateData(pm, newMesh, axis)
	}
	c := a.m.Clone()
	ca := &dpAnnotator{m: c, p: c.Main, batch: a.batch, size: a.size}
	if err := ca.annotateData(pm, newMesh, axis); err != nil {
		return err
	}
	if _, err := complete.Complete(c, complete.Options{}); err != nil {
		return fmt.Errorf("batch-norm=local with data-only: completing a copy to find the batch_norms on the split batch: %w", err)
	}
	if err := a.annotateData(pm, newMesh, axis); err != nil {
		return err
	}
	for bi, b := range a.p.Blocks {
		for i, op := range b.Ops {
			d := c.Main.Blocks[bi].Ops[i].Dist
			if !trainingBN(op) || d == nil || d.ImplType != "batch_norm" {
				continue
			}
			d = d.Clone()
			d.ImplType, d.ImplIndex = lower.DefaultType, 0
			op.Dist = d
		}
	}
	return nil
}

// dpMesh finds or makes the mesh: a declared one by name, or a new 1-D
// mesh "world" of shape ranks (shape 0: none).
func dpMesh(m *ir.Module, name string, shape int, axis string) (*ir.ProcessMesh, bool, error) {
	switch {
	case axis == "":
		return nil, false, errors.New("axis=\"\": the mesh dim needs a name")
	case name != "" && shape != 0:
		return nil, false, errors.New("give mesh=NAME or shape=N, not both")
	case name != "":
		pm := m.Mesh(name)
		if pm == nil {
			return nil, false, fmt.Errorf("no mesh named %s", name)
		}
		if pm.DimIndex(axis) < 0 {
			return nil, false, fmt.Errorf("mesh %s has no dim named %s (dims [%s])", name, axis, strings.Join(pm.DimNames, ", "))
		}
		return pm, false, nil
	case shape != 0:
		n := shape
		if n < 0 || n > ir.MaxMeshRanks {
			// The ranks list alone would be n ints: shape=1000000000 ran
			// out of memory making it.
			return nil, false, fmt.Errorf("shape=%d: want a rank count from 1 to %d (ir.MaxMeshRanks)", shape, ir.MaxMeshRanks)
		}
		if m.Mesh("world") != nil {
			return nil, false, errors.New("the module already has a mesh named world: give mesh=world")
		}
		ranks := make([]int, n)
		for i := range ranks {
			ranks[i] = i
		}
		return &ir.ProcessMesh{Name: "world", Shape: []int{n}, DimNames: []string{axis}, ProcessIDs: ranks}, true, nil
	}
	return nil, false, errors.New("give mesh=NAME or shape=N")
}

type dpAnnotator struct {
	m     *ir.Module
	p     *ir.Program
	batch map[string]bool // vars whose dim 0 is the batch
	size  int64           // the batch size, -1 when unknown, 0 before the first data var
	errs  []error
}

func (a *dpAnnotator) fail(b *ir.Block, op *ir.Op, format string, args ...any) {
	where := ""
	if b.Index != 0 {
		where = fmt.Sprintf("block %d: ", b.Index)
	}
	a.errs = append(a.errs, fmt.Errorf("%s%s: "+format, append([]any{where, op}, args...)...))
}

// seed marks the data vars: is_data, or written by a feed op. They must
// agree on the batch size.
func (a *dpAnnotator) seed() error {
	var data []*ir.Var
	for _, b := range a.p.Blocks {
		for _, v := range b.Vars() {
			if v.Has(ir.FlagIsData) && v.Type.IsTensor() && v.Type.Rank() > 0 {
				data = append(data, v)
			}
		}
		for _, op := range b.Ops {
			if op.Type != "feed" {
				continue
			}
			for out := range op.OutputNames {
				if v := a.p.LookupVar(b, out); v != nil && v.Type.IsTensor() && v.Type.Rank() > 0 && !slices.Contains(data, v) {
					data = append(data, v)
				}
			}
		}
	}
	if len(data) == 0 {
		return errors.New("no data var (is_data, or written by a feed op) to take the batch dim from")
	}
	// A data var of one row beside data of more (a model's single target
	// for a whole batch, when its output folds the batch) has no batch
	// dim: it stays whole.
	batched := slices.ContainsFunc(data, func(v *ir.Var) bool { return v.Type.Shape[0] > 1 })
	for _, v := range data {
		d := v.Type.Shape[0]
		if batched && d == 1 {
			continue
		}
		if a.size != 0 && d != a.size {
			return fmt.Errorf("data vars disagree on the batch size: %s has %d, another %d", v.Name(), d, a.size)
		}
		a.size = d
		a.batch[v.Name()] = true
	}
	return nil
}

// trainingBN reports whether op is a batch_norm that takes its
// statistics over the batch.
func trainingBN(op *ir.Op) bool {
	return op.Type == "batch_norm" && !boolAttrOf(op, "is_test") && !boolAttrOf(op, "use_global_stats")
}

// boolAttrOf reads a boolean attr that old Paddle files write as an int.
func boolAttrOf(op *ir.Op, name string) bool {
	switch v := op.Attrs.Get(name).(type) {
	case ir.Bool:
		return bool(v)
	case ir.Int:
		return v != 0
	}
	return false
}

// movesBatch says why op, which reads the batch, may not keep it in dim
// 0, or "".
func (a *dpAnnotator) movesBatch(b *ir.Block, op *ir.Op) string {
	switch {
	case strings.HasPrefix(op.Type, "reduce_"):
		all, _ := ir.AsBool(ops.AttrValue(op, "reduce_all"))
		dims, _ := ir.AsInts(ops.AttrValue(op, "dim"))
		if all || len(dims) == 0 || slices.ContainsFunc(dims, func(d int64) bool { return d == 0 || d == -a.rankOf(b, op, "X") }) {
			return fmt.Sprintf("it reduces over the batch dim (dim %v, reduce_all %v)", []int64(dims), all)
		}
	case op.Type == "transpose2" || op.Type == "transpose":
		if perm, _ := ir.AsInts(ops.AttrValue(op, "axis")); len(perm) > 0 && perm[0] != 0 {
			return fmt.Sprintf("its perm %v moves the batch dim", []int64(perm))
		}
	case op.Type == "flatten_contiguous_range":
		if start, _ := ir.AsInt(ops.AttrValue(op, "start_axis")); start == 0 {
			return "it folds the batch dim into others (start_axis 0)"
		}
	case op.Type == "reshape2" || op.Type == "reshape":
		return a.reshapeMoves(b, op)
	}
	return ""
}

func (a *dpAnnotator) rankOf(b *ir.Block, op *ir.Op, slot string) int64 {
	if xs := op.Input(slot); len(xs) == 1 {
		if v := a.p.LookupVar(b, xs[0]); v != nil {
			return int64(v.Type.Rank())
		}
	}
	return 0
}

// reshapeMoves proves a reshape keeps dim 0: shape[0] is 0 (copy) or the
// batch size, or it is -1 and the other dims hold exactly X's non-batch
// elements.
func (a *dpAnnotator) reshapeMoves(b *ir.Block, op *ir.Op) string {
	shape, ok := ir.AsInts(ops.AttrValue(op, "shape"))
	if !ok || len(shape) == 0 {
		return "its target shape is not a shape attr (ShapeTensor?), so dim 0 cannot be proved kept"
	}
	if shape[0] == 0 || (a.size > 0 && shape[0] == a.size) {
		return ""
	}
	xs := op.Input("X")
	if shape[0] == -1 && len(xs) == 1 {
		if x := a.p.LookupVar(b, xs[0]); x != nil && x.Type.Rank() > 0 {
			in, out := int64(1), int64(1)
			for _, d := range x.Type.Shape[1:] {
				in *= d
			}
			for _, d := range shape[1:] {
				out *= d
			}
			if in > 0 && in == out {
				return ""
			}
		}
	}
	return fmt.Sprintf("its shape %v does not keep the batch dim in dim 0", []int64(shape))
}

func fmtShape(s []int64) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
