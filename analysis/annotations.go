package analysis

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/spmd"
)

// Annotations checks that the main program is completely and soundly
// annotated, as check-annotations and the partitioner need it.
var Annotations = &Analyzer{
	Name: "annotations",
	Doc: "Annotations lists every missing or unusable dist annotation of the main program: " +
		"ops without an op dist, shaped vars without a tensor dist, mappings that do not fit " +
		"the tensor or the mesh, mesh dims used twice, uneven splits, op mappings that are " +
		"not their vars' dists, partial values used as whole ones.",
	Requires: []*Analyzer{Index},
	Run: func(p *Inputs) (any, error) {
		return checkAnnotations(p.Module, p.Result(Index).(*IndexInfo)), nil
	},
}

// AnnotationReport is the result of Annotations: every problem found, or
// none when the annotations are complete. It is a result rather than an
// error so that the pass that asks decides what a problem costs.
//
// The rules, over every block of the main program (the startup program
// takes its vars' dists from main, as Paddle's partitioner does):
//
//   - the meshes pass ProcessMesh.Validate;
//   - every dense-tensor var's element count (dims of unknown size
//     skipped) fits int64;
//   - every dense-tensor var has a tensor dist, on a declared mesh, whose
//     dims_mapping has one entry per tensor dim, each -1 or a mesh dim,
//     no mesh dim twice, and whose partial dims are mesh dims that the
//     mapping does not use, each with a reduction exact on the var's
//     dtype (spmd.ExactPartial: no average of integers or bools, no sum
//     of bools);
//   - every op has an op dist on a declared mesh, with a dims_mapping for
//     each of its args that names a dense tensor, each fitting the var as
//     above, and none for a name that is not an arg on that side (nor two
//     for one);
//   - every sharded tensor dim of known size divides evenly by the size
//     of its mesh dim;
//   - with a pipeline (a mesh with a dim named "pp", the first such is
//     the global mesh), every op's mesh lies inside one pipeline stage
//     (ProcessMesh.PipelineStage), reported once per mesh at the first op
//     on it;
//   - every arg of an op with a dist names a var declared in its block
//     or an ancestor (an arg that does not cannot be annotated);
//   - every op's mapping of an arg is the arg var's own dims_mapping on
//     the op's mesh (or an equal one): else the data would have to move,
//     which only a reshard op does (insert-reshards makes them). Only a replicated, non-partial value crosses
//     into another mesh, one whose ranks all hold it (a partial one only
//     into the MoE ops that read each rank's own part);
//   - an op reading a partial value carries it into a partial output
//     (or is such an MoE op; a grad op's forward values are the forward
//     op's to check, its partial grads its own), and a partial output
//     comes from a partial input or from folding a dim split along that
//     mesh dim (its sharding rule says so, or it has another shape than
//     the split input);
//   - a reduction (mean, reduce_*) over a dim split along a mesh dim of
//     size > 1 has an output partial along it, with the reduction's
//     kind; a trained loss (the block has a loss-grad op) is partial
//     only as an average, which the data-parallel grad sync assumes;
//   - an optimizer op's Grad is split as its Param;
//   - the grad sync rule below does not apply to the grad ops of an op
//     lowered by the rule-based impl (impl type spmd): they emit no sync,
//     and their param grads are partial [d:avg] where the loss averages
//     (the impl holds them to that);
//   - after the loss grad, a grad op writing a param grad is one the
//     data-parallel grad sync handles right (lower.SyncGrads, the
//     batch-dim rule): the mesh dim of its first activation input's dim
//     0 is one the loss averages over, and when no such input is split
//     the loss averages over none (the grouped matmul averages itself);
//   - a reshard op's ends differ by design: the rules above are not
//     checked on it (its vars' dists are, as every var's), and its
//     lowering refuses what it has no collectives for; but a backward
//     reshard gathering a gradient along a mesh dim the loss averages
//     over, into what reaches a param's grad whole (not split along it
//     again first), is an error: it would carry n times the gradient;
//   - a var's local dims (local [d]: its values are positions into each
//     rank's own rows split along mesh dim d) are what its writer makes
//     of it: assign_pos over an X whose dim 0 it reads split along d, or
//     an op keeping indices (ops.KeepsIndex: integer arithmetic, casts,
//     views) of a local [d] input; an integer output of such an op
//     without them, a local var any other op writes, and one no op
//     writes are errors naming the var;
//   - a gather or scatter (or their grads) whose index var is local [d]
//     indexes rows split as those rows are: on the index's mesh, its
//     indexed dim along mesh dim d (positions over an X whose rows are
//     not split, only other dims, index no rows so split: refused); and
//     no reshard moves rank-local positions (they mean nothing on
//     another rank);
//   - MoE count vectors hold one entry per expert of the layer
//     (number_count's upper_range, a grouped_matmul's W), and a
//     grouped_matmul's experts are split along the axis its rows are
//     exchanged over.
//
// Problems come in a deterministic order: the meshes', then block by
// block, the block's vars in order, then its ops in order.
type AnnotationReport struct {
	Problems []ir.Violation
}

// Complete reports whether no problem was found.
func (r *AnnotationReport) Complete() bool { return len(r.Problems) == 0 }

// Err returns nil when the annotations are complete, or an error listing
// every problem, one a line.
func (r *AnnotationReport) Err() error {
	if r.Complete() {
		return nil
	}
	var sb strings.Builder
	for i, p := range r.Problems {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(p.Error())
	}
	return errors.New(sb.String())
}

type annChecker struct {
	meshes   meshes
	global   *ir.ProcessMesh // the pipeline's mesh (a "pp" dim), or nil
	staged   map[string]bool // meshes whose stage is checked
	pi       *progIndex
	out      []ir.Violation
	used     []bool // scratch: which arg dists matched an arg
	foldMemo ops.FoldMemo
	// sawPartial: an arg of the op being checked is partial, so its
	// partial states need checking (most ops have none).
	sawPartial bool
	// packed holds, by gid, each var's dist as packDist packs it (0: not
	// packed): the ops' args are compared with it, one dense array read,
	// rather than with the var's dist, a read out of cache each.
	packed []uint64
	opMesh int // the op being checked's mesh, as packDist numbers meshes
	// partitioned: main is one rank's program, its shapes local.
	partitioned bool
	// What checkOp saw of the block being checked, for the block-wide
	// checks (another pass over a large block's ops costs a cache miss
	// an op): its MoE ops and loss ops by position, and whether it has a
	// loss-grad op.
	moe, losses []int
	trained     bool
	// The block's loss as checkOp last saw it (its output var), and
	// whether a loss-grad op came after it: the grad sync check.
	loss         *ir.Var
	lossGradSeen bool
	// spmdFwd holds the ids of the forward ops the rule-based impl
	// lowers: their grad ops are lowered by it too, whatever their own
	// dist says (the lowering takes a grad op's impl from its fwd op).
	spmdFwd map[int64]bool
	// gradViews is ops.ParamGradViews of block gradViewsOf, once the
	// grad sync check asks.
	gradViews   map[string]bool
	gradViewsOf int
	module      *ir.Module
	// localCheck: main numbers rank-local positions or declares a var
	// local (localindex.go); localWritten the vars its ops write, once
	// asked.
	localCheck   bool
	localWritten map[*ir.Var]bool
}

func checkAnnotations(m *ir.Module, x *IndexInfo) *AnnotationReport {
	r := &AnnotationReport{}
	if m == nil || m.Main == nil {
		return r
	}
	c := &annChecker{meshes: newMeshes(m), pi: x.prog(m.Main), staged: map[string]bool{}, module: m}
	c.packed = make([]uint64, c.pi.nvars)
	c.partitioned = m.Main.Rank >= 0
	c.localCheck = !c.partitioned && hasLocal(m.Main)
	for i, pm := range m.Meshes {
		if pm == nil {
			c.out = append(c.out, ir.Violation{Block: -1, Msg: fmt.Sprintf("meshes[%d] is nil", i)})
			continue
		}
		if c.global == nil && pm.DimIndex("pp") >= 0 {
			c.global = pm
		}
		if err := pm.Validate(); err != nil {
			for _, e := range unjoin(err) {
				c.out = append(c.out, ir.Violation{Block: -1, Msg: e.Error()})
			}
		}
	}
	for bi, b := range m.Main.Blocks {
		if b == nil {
			continue
		}
		off := c.pi.blocks[bi].varOff
		for i, v := range b.Vars() {
			if v != nil && v.Type.Kind == ir.DenseTensor {
				c.checkVar(bi, v)
				c.packed[off+int32(i)] = c.packDist(v)
			}
		}
		c.moe, c.losses, c.trained = c.moe[:0], c.losses[:0], false
		c.loss, c.lossGradSeen = nil, false
		for pos, op := range b.Ops {
			if op != nil {
				c.checkOp(bi, pos, op)
				switch {
				case isMoEOp(op.Type):
					c.moe = append(c.moe, pos)
				case op.Role.IsLoss():
					c.losses = append(c.losses, pos)
				case op.Role.IsLossGrad():
					c.trained = true
				}
			}
		}
		c.checkCounts(bi, b)
		c.checkLossSync(bi, b)
		c.checkScaledGathers(bi, b)
		if c.localCheck {
			c.checkLocalIndices(bi, b)
		}
	}
	r.Problems = c.out
	return r
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func (c *annChecker) varErr(bi int, v *ir.Var, msg string) {
	c.out = append(c.out, ir.Violation{Program: "main", Block: bi, Var: v.Name(), Msg: msg})
}

func (c *annChecker) opErr(bi int, op *ir.Op, arg, msg string) {
	c.out = append(c.out, ir.Violation{Program: "main", Block: bi, OpID: op.ID, OpType: op.Type, Var: arg, Msg: msg})
}

func (c *annChecker) checkVar(bi int, v *ir.Var) {
	if countOverflows(v.Type.Shape) {
		c.varErr(bi, v, "shape "+fmtInts(v.Type.Shape)+": element count overflows int64")
	}
	d := v.Dist
	if d == nil {
		c.varErr(bi, v, "no dist")
		return
	}
	pm := c.meshes.get(d.Mesh)
	if pm == nil {
		c.varErr(bi, v, "dist on unknown mesh "+quoteName(d.Mesh))
	}
	if !mappingFits(d.DimsMapping, v.Type.Shape, pm) {
		for _, msg := range mappingProblems(d.DimsMapping, v.Type.Shape, pm) {
			c.varErr(bi, v, msg)
		}
	}
	if pm == nil {
		return
	}
	for _, p := range d.Partial {
		switch {
		case p.Dim < 0 || p.Dim >= len(pm.Shape):
			c.varErr(bi, v, fmt.Sprintf("partial dim %d outside [0, %d) of mesh %s", p.Dim, len(pm.Shape), quoteName(pm.Name)))
		case contains(d.DimsMapping, p.Dim):
			c.varErr(bi, v, fmt.Sprintf("partial dim %d is also in dims_mapping %s", p.Dim, fmtInts(d.DimsMapping)))
		}
		if err := spmd.ExactPartial(v.Type.DType, p.Reduce); err != nil {
			c.varErr(bi, v, fmt.Sprintf("partial along mesh dim %d: %v", p.Dim, err))
		}
	}
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func (c *annChecker) checkOp(bi, pos int, op *ir.Op) {
	if op.Type == ops.ReshardType {
		// Its two ends differ by design, so the checks below would
		// misreport it: its vars' dists are checked as every var's, and
		// its lowering (lower) refuses the conversions it has none for.
		return
	}
	d := op.Dist
	if d == nil {
		c.opErr(bi, op, "", "no dist")
		return
	}
	pm := c.meshes.get(d.Mesh)
	if pm == nil {
		c.opErr(bi, op, "", "dist on unknown mesh "+quoteName(d.Mesh))
	} else if c.global != nil && pm != c.global && !c.staged[pm.Name] {
		c.staged[pm.Name] = true
		if msg := stageProblem(pm, c.global); msg != "" {
			c.opErr(bi, op, "", msg)
		}
	}
	ins, outs := c.pi.opArgs(OpRef{int32(bi), int32(pos)})
	c.sawPartial = false
	c.opMesh = c.meshIndex(pm)
	c.checkArgs(bi, op, op.Inputs, ins, d.Inputs, "input", pm)
	c.checkArgs(bi, op, op.Outputs, outs, d.Outputs, "output", pm)
	// The rule-based impl (lower.SPMD) emits no grad sync: its param
	// grads are partial, and say so.
	var ruled bool
	if op.Role.IsBackward() && op.Fwd != 0 {
		ruled = c.spmdFwd[op.Fwd]
	} else if d.ImplType == spmdImpl {
		ruled = true
		if c.spmdFwd == nil {
			c.spmdFwd = map[int64]bool{}
		}
		c.spmdFwd[op.ID] = true
	}
	if pm != nil {
		if c.sawPartial {
			c.checkPartials(bi, op, ins, outs, pm)
		}
		if _, ok := reduction(op.Type); ok {
			c.checkReduction(bi, op, ins, outs)
		}
		if op.Role.IsOptimize() {
			c.checkParamGrad(bi, op)
		}
		switch {
		case op.Role.IsLoss():
			c.loss = nil
			if len(outs) > 0 && outs[0] >= 0 {
				c.loss = c.pi.v(outs[0])
			}
		case op.Role.IsLossGrad():
			c.lossGradSeen = true
		case op.Role.IsBackward() && !op.Role.IsOptimize() && op.Fwd != 0 && c.lossGradSeen && c.loss != nil && !ruled:
			// Grad ops of forward ops: a sum of grad parts reads grads only,
			// and a partitioned program's collectives are the sync itself.
			c.checkGradSync(bi, op, ins, pm)
		}
	}
}

// checkArgs checks the arg dists of one side of op against its args,
// whose gids are gids.
func (c *annChecker) checkArgs(bi int, op *ir.Op, slots []ir.Slot, gids []int32, ads []ir.ArgDist, side string, pm *ir.ProcessMesh) {
	if cap(c.used) < len(ads) {
		c.used = make([]bool, len(ads))
	}
	used := c.used[:len(ads)]
	clear(used)
	next, j := 0, 0 // arg dists usually follow the args' order
	for si := range slots {
		for ai, name := range slots[si].Args {
			k := findArgDist(ads, name, next)
			if k >= 0 {
				used[k] = true
				next = k + 1
			}
			g := gids[j]
			j++
			if g < 0 {
				// An arg the op cannot be annotated for: said once per
				// name, as Verify says it.
				if !seenArg(slots, si, ai, name) {
					c.opErr(bi, op, name, side+" "+quoteName(slots[si].Name)+" names undeclared var "+quoteName(name))
				}
				continue
			}
			v := c.pi.v(g)
			if v.Type.Kind != ir.DenseTensor {
				continue
			}
			if k < 0 {
				if !seenArg(slots, si, ai, name) {
					c.opErr(bi, op, name, "dist: no dims_mapping for "+side+" "+quoteName(name))
				}
				continue
			}
			dm := ads[k].DimsMapping
			if !mappingFits(dm, v.Type.Shape, pm) {
				if !seenArg(slots, si, ai, name) {
					for _, msg := range mappingProblems(dm, v.Type.Shape, pm) {
						c.opErr(bi, op, name, "dist "+side+" "+quoteName(name)+": "+msg)
					}
				}
			} else if pv := c.packed[g]; pv != 0 && pv&^packPartial == packMapping(dm, c.opMesh) {
				// The common case: the op sees the var as it is.
				if pv&packPartial != 0 {
					c.sawPartial = true
				}
			} else if d := v.Dist; d != nil {
				if pm == nil || d.Mesh != pm.Name || !slices.Equal(dm, d.DimsMapping) {
					if !seenArg(slots, si, ai, name) {
						c.checkAgree(bi, op, side == "input", v, dm, pm)
					}
				}
				if len(d.Partial) > 0 {
					c.sawPartial = true
				}
			}
		}
	}
	for k, u := range used {
		if u {
			continue
		}
		name := ads[k].Name
		if isArg(slots, name) {
			c.opErr(bi, op, name, "dist "+side+" "+quoteName(name)+": dims_mapping given twice")
		} else {
			c.opErr(bi, op, name, "dist "+side+" "+quoteName(name)+": not an "+side+" of the op")
		}
	}
}

// findArgDist returns the index of the arg dist of name, looking from
// next first, or -1.
func findArgDist(ads []ir.ArgDist, name string, next int) int {
	for k := next; k < len(ads); k++ {
		if ads[k].Name == name {
			return k
		}
	}
	for k := 0; k < next && k < len(ads); k++ {
		if ads[k].Name == name {
			return k
		}
	}
	return -1
}

// seenArg reports whether name is an arg before slots[si].Args[ai].
func seenArg(slots []ir.Slot, si, ai int, name string) bool {
	for s := 0; s <= si; s++ {
		args := slots[s].Args
		if s == si {
			args = args[:ai]
		}
		for _, a := range args {
			if a == name {
				return true
			}
		}
	}
	return false
}

func isArg(slots []ir.Slot, name string) bool {
	for _, s := range slots {
		for _, a := range s.Args {
			if a == name {
				return true
			}
		}
	}
	return false
}

// mappingFits is the fast check of a dims_mapping for a tensor of shape
// on mesh pm (nil: unknown, so ranges and sizes are not checked). False
// means that mappingProblems has something to say.
func mappingFits(dm []int, shape []int64, pm *ir.ProcessMesh) bool {
	if len(dm) != len(shape) {
		return false
	}
	var seen uint64
	for i, e := range dm {
		if e == -1 {
			continue
		}
		if e < -1 || e >= 64 || pm != nil && e >= len(pm.Shape) || seen&(1<<e) != 0 {
			return false
		}
		seen |= 1 << e
		if pm != nil {
			if n := pm.Shape[e]; n > 0 && shape[i] > 0 && shape[i]%int64(n) != 0 {
				return false
			}
		}
	}
	return true
}

// mappingProblems says what is wrong with a dims_mapping for a tensor of
// shape on mesh pm (nil: unknown).
func mappingProblems(dm []int, shape []int64, pm *ir.ProcessMesh) []string {
	var msgs []string
	if len(dm) != len(shape) {
		msgs = append(msgs, fmt.Sprintf("dims_mapping %s has length %d, tensor rank is %d", fmtInts(dm), len(dm), len(shape)))
	}
	for i, e := range dm {
		switch {
		case pm != nil && (e < -1 || e >= len(pm.Shape)):
			msgs = append(msgs, fmt.Sprintf("dims_mapping %s has entry %d outside [-1, %d) of mesh %s", fmtInts(dm), e, len(pm.Shape), quoteName(pm.Name)))
			continue
		case e < -1:
			msgs = append(msgs, fmt.Sprintf("dims_mapping %s has entry %d below -1", fmtInts(dm), e))
			continue
		case e == -1:
			continue
		}
		if countOf(dm[:i], e) == 1 {
			msgs = append(msgs, fmt.Sprintf("dims_mapping %s uses mesh dim %d twice", fmtInts(dm), e))
		}
		if pm == nil || i >= len(shape) {
			continue
		}
		if n := pm.Shape[e]; n > 0 && shape[i] > 0 && shape[i]%int64(n) != 0 {
			msgs = append(msgs, unevenMsg(dm, i, shape[i], pm, e))
		}
	}
	return msgs
}

func unevenMsg(dm []int, i int, size int64, pm *ir.ProcessMesh, e int) string {
	dim := fmt.Sprint(e)
	if e < len(pm.DimNames) {
		dim += " (" + quoteName(pm.DimNames[e]) + ")"
	}
	return fmt.Sprintf("dims_mapping %s: dim %d of size %d does not split evenly over mesh dim %s of size %d",
		fmtInts(dm), i, size, dim, pm.Shape[e])
}

func countOf(xs []int, x int) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

// stageProblem says why pm is not inside one pipeline stage of global,
// or "".
func stageProblem(pm, global *ir.ProcessMesh) string {
	stage, err := pm.PipelineStage(global)
	if err != nil {
		return "pipeline: " + err.Error()
	}
	var out []int
	for _, r := range pm.ProcessIDs {
		if !stage.Contains(r) {
			out = append(out, r)
		}
	}
	if len(out) > 0 {
		return fmt.Sprintf("pipeline: mesh %s spans stages: its ranks %s are outside the stage of its first rank, %s",
			quoteName(pm.Name), fmtInts(out), fmtInts(stage.ProcessIDs))
	}
	return ""
}
