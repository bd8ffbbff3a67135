// Package proof proves, without running them, that per-rank programs
// compute the serial program they were partitioned from (issue 40;
// docs/static-proof.md is the design). It follows each rank's program
// op by op with an abstract value per var: its placement on the mesh,
// the reductions it still owes along mesh dims, and the coefficient it
// carries; the op rules are the only trust base.
//
// This first step covers what data and tensor parallelism emit: the
// serial ops kept on a rank (their rule gives their outputs' placement
// and partial state), all-reduces by the group table, the
// data-parallel average's scale, c_identity and c_broadcast. Any other
// emitted op is followed no further: the vars it writes are unproven,
// never proven.
package proof

import (
	"fmt"
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
)

// Finding is one thing the proof refuted or could not follow, on one
// rank.
type Finding struct {
	Rank     int
	OpID     int64  // the rank's op, 0 for a var's end state
	OpType   string //
	Var      string
	Msg      string
	Unproven bool // the proof could not follow it (else: refuted)
}

func (f Finding) String() string {
	at := "var " + f.Var
	if f.OpID != 0 {
		at = fmt.Sprintf("op %d %s", f.OpID, f.OpType)
		if f.Var != "" {
			at += " (" + f.Var + ")"
		}
	}
	kind := "refuted"
	if f.Unproven {
		kind = "unproven"
	}
	return fmt.Sprintf("rank %d: %s: %s: %s", f.Rank, at, kind, f.Msg)
}

// Result is the proof of a partition: proven when it has no finding.
type Result struct {
	Findings []Finding
}

// Refuted returns the first refuting finding, or nil.
func (r *Result) Refuted() *Finding {
	for i := range r.Findings {
		if !r.Findings[i].Unproven {
			return &r.Findings[i]
		}
	}
	return nil
}

// Proven reports whether the proof followed every rank to the end, each
// value it computes the block of the serial value its dist declares, and
// every group's members issue its collectives in one order. Sends
// meeting receives are not checked yet (the proof does not follow
// send_v2: unproven).
func (r *Result) Proven() bool { return len(r.Findings) == 0 }

// Check proves parts, the programs of ranks, against serial.
func Check(serial *ir.Module, ranks []int, parts []*ir.Module) (*Result, error) {
	if len(ranks) != len(parts) {
		return nil, fmt.Errorf("%d ranks and %d programs", len(ranks), len(parts))
	}
	if serial.Main == nil || len(serial.Main.Blocks) == 0 {
		return nil, fmt.Errorf("the serial module has no main program")
	}
	res := &Result{}
	for i, part := range parts {
		if part == nil || part.Main == nil || len(part.Main.Blocks) == 0 {
			return nil, fmt.Errorf("rank %d: no main program", ranks[i])
		}
		p := &prover{serial: serial, sg: serial.Main.Global(), part: part, g: part.Main.Global(), rank: ranks[i],
			env: map[string]*value{}, byID: map[int64]*ir.Op{}}
		p.run()
		res.Findings = append(res.Findings, p.found...)
	}
	res.Findings = append(res.Findings, collectiveOrder(ranks, parts)...)
	return res, nil
}

// pointToPoint are the ops a pair of ranks issues as send and receive.
var pointToPoint = map[string]bool{"send_v2": true, "recv_v2": true, "p_send": true, "p_recv": true, "partial_send": true, "partial_recv": true}

// collectiveOrder refutes a group whose members issue its collectives in
// different orders: each member's sequence on a ring, by op type and the
// serial op it lowers (origin_op), must be the first member's (they
// would meet the wrong peer's data, or wait forever).
func collectiveOrder(ranks []int, parts []*ir.Module) []Finding {
	type issued struct {
		typ string
		of  int64
		id  int64
	}
	seq := map[int64]map[int][]issued{} // ring -> rank -> its collectives
	var rings []int64
	for i, part := range parts {
		for _, op := range part.Main.Global().Ops {
			ring, ok := ir.AsInt(op.Attrs.Get("ring_id"))
			if !ok || op.Type == "c_identity" || pointToPoint[op.Type] {
				continue // a send meets a receive: not an order of one kind
			}
			if seq[ring] == nil {
				seq[ring] = map[int][]issued{}
				rings = append(rings, ring)
			}
			of, _ := originOp(op)
			seq[ring][ranks[i]] = append(seq[ring][ranks[i]], issued{op.Type, of, op.ID})
		}
	}
	var out []Finding
	for _, ring := range rings {
		grp := parts[0].Group(int(ring))
		if grp == nil {
			continue
		}
		first := -1
		for _, r := range grp.Ranks {
			if _, ok := seq[ring][r]; !ok || !slices.Contains(ranks, r) {
				continue
			}
			if first < 0 {
				first = r
				continue
			}
			a, b := seq[ring][first], seq[ring][r]
			for k := 0; k < max(len(a), len(b)); k++ {
				if k < len(a) && k < len(b) && a[k].typ == b[k].typ && a[k].of == b[k].of {
					continue
				}
				f := Finding{Rank: r, Msg: fmt.Sprintf("collective %d on ring %d is not rank %d's: the group's members must issue its collectives in one order", k+1, ring, first)}
				if k < len(b) {
					f.OpID, f.OpType = b[k].id, b[k].typ
				}
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// value is what a rank's var holds of its serial var: its placement,
// the reductions it owes along mesh dims (sorted by dim) and the factor
// it carries beside the serial value's block. unknown: the proof did not
// follow its writer.
type value struct {
	dims    []int
	owed    []ir.Partial
	coef    float64
	unknown bool
	written bool
}

type prover struct {
	serial *ir.Module
	sg     *ir.Block
	part   *ir.Module
	g      *ir.Block
	rank   int
	env    map[string]*value
	byID   map[int64]*ir.Op
	found  []Finding
	// computed are the serial vars an op computes (not data, params or
	// state): a rank reading one before writing it reads nothing.
	computed map[string]bool
	// lossCoef is the factor a rank's loss gradient carries: a loss
	// averaged over mesh dims of n ranks is seeded 1 on each, n times
	// its share of the serial loss's gradient (the sync's 1/n takes it).
	lossCoef float64
}

func (p *prover) refute(op *ir.Op, v, format string, args ...any) {
	f := Finding{Rank: p.rank, Var: v, Msg: fmt.Sprintf(format, args...)}
	if op != nil {
		f.OpID, f.OpType = op.ID, op.Type
	}
	p.found = append(p.found, f)
}

func (p *prover) unproven(op *ir.Op, v, format string, args ...any) {
	p.refute(op, v, format, args...)
	p.found[len(p.found)-1].Unproven = true
}

func (p *prover) run() {
	for _, op := range p.sg.Ops {
		p.byID[op.ID] = op
	}
	p.lossCoef = p.lossFactor()
	p.computed = map[string]bool{}
	for _, op := range p.sg.Ops {
		for a := range op.OutputNames {
			if v := p.sg.Var(a); v != nil && !v.Persistable() && !v.Has(ir.FlagIsData) {
				p.computed[a] = true
			}
		}
	}
	seen := map[int64]bool{}
	for _, op := range p.g.Ops {
		if id, emitted := originOp(op); emitted {
			seen[id] = true
			p.emitted(op)
		} else {
			seen[op.ID] = true
			p.kept(op)
		}
	}
	p.covers(seen)
	p.ends()
}

// covers refutes a serial op on this rank's mesh that no op of the rank
// computes or lowers (origin_op).
func (p *prover) covers(seen map[int64]bool) {
	for _, op := range p.sg.Ops {
		if seen[op.ID] || op.Dist == nil {
			continue
		}
		if pm := p.serial.Mesh(op.Dist.Mesh); pm == nil || !pm.Contains(p.rank) {
			continue
		}
		p.refute(nil, "", "the serial op %d %s has no counterpart on this rank", op.ID, op.Type)
	}
}

// lossFactor is the product of the sizes of the mesh dims the serial
// loss is averaged over.
func (p *prover) lossFactor() float64 {
	for _, op := range p.sg.Ops {
		if !op.Role.IsLoss() || op.Role.IsBackward() {
			continue
		}
		for a := range op.OutputNames {
			v := p.sg.Var(a)
			if v == nil || v.Dist == nil {
				return 1
			}
			pm := p.serial.Mesh(v.Dist.Mesh)
			f := 1.0
			for _, q := range v.Dist.Partial {
				if q.Reduce == ir.ReduceAvg && pm != nil && q.Dim < len(pm.Shape) {
					f *= float64(pm.Shape[q.Dim])
				}
			}
			return f
		}
	}
	return 1
}

func originOp(op *ir.Op) (int64, bool) {
	v := op.Attrs.Get("origin_op")
	if v == nil {
		return 0, false
	}
	id, ok := ir.AsInt(v)
	return id, ok
}

// read returns the value of var a: what an op wrote, or what the var
// declares (a data input, a param, state).
func (p *prover) read(a string) *value {
	if v := p.env[a]; v != nil {
		return v
	}
	v := p.g.Var(a)
	val := &value{coef: 1}
	if p.computed[a] {
		p.refute(nil, a, "read before this rank computes it (the serial program does)")
		val.unknown = true
		p.env[a] = val
		return val
	}
	if v == nil || v.Dist == nil {
		val.unknown = true
	} else {
		val.dims, val.owed = slices.Clone(v.Dist.DimsMapping), slices.Clone(v.Dist.Partial)
	}
	p.env[a] = val
	return val
}

// write records a's value: a var the rank declares placed otherwise
// holds a block the dist does not say.
func (p *prover) write(a string, v *value) {
	v.written = true
	p.env[a] = v
	if d := p.g.Var(a); d != nil && d.Dist != nil && !v.unknown && v.dims != nil && !slices.Equal(d.Dist.DimsMapping, v.dims) {
		p.refute(nil, a, "holds a block placed %s, and the rank declares it %s", ir.FormatInts(v.dims), ir.FormatInts(d.Dist.DimsMapping))
	}
}

// vocabParallel follows c_embedding and its grad, the vocabulary-parallel
// lookup of a serial lookup_table_v2 (origin_op): the lookup's rule
// gives the placements and the sum the rows off a rank's block owe; its
// start_index must be where this rank's block of W's rows begins.
func (p *prover) vocabParallel(op *ir.Op) {
	id, _ := originOp(op)
	sop := p.byID[id]
	w := p.sg.Var(firstArg(op.Input("W")))
	if sop == nil || w == nil || w.Dist == nil || len(w.Dist.DimsMapping) == 0 || len(w.Type.Shape) == 0 {
		p.unknownOut(op, "a vocabulary-parallel lookup of no serial lookup with a placed W")
		return
	}
	pm := p.serial.Mesh(w.Dist.Mesh)
	d := w.Dist.DimsMapping[0]
	start := int64(0)
	if pm != nil && d >= 0 {
		c, err := pm.Coord(p.rank)
		if err != nil {
			p.unknownOut(op, err.Error())
			return
		}
		start = int64(c[d]) * (w.Type.Shape[0] / int64(pm.Shape[d]))
	}
	if got, _ := ir.AsInt(op.Attrs.Get("start_index")); got != start {
		p.refute(op, w.Name(), "start_index %d, but this rank's rows of %s begin at %d", got, w.Name(), start)
	}
	p.as(op, sop)
}

func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// emitted follows an op a lowering emitted.
func (p *prover) emitted(op *ir.Op) {
	switch op.Type {
	case "c_embedding", "c_embedding_grad":
		p.vocabParallel(op)
		return
	case "sync_batch_norm", "sync_batch_norm_grad":
		p.syncBatchNorm(op)
		return
	}
	xs, outs := op.Input("X"), op.Output("Out")
	if len(xs) != 1 || len(outs) != 1 {
		p.unknownOut(op, "an emitted "+op.Type+" the proof does not follow yet")
		return
	}
	in := p.read(xs[0])
	if in.unknown {
		p.write(outs[0], &value{unknown: true})
		return
	}
	out := &value{dims: slices.Clone(in.dims), owed: slices.Clone(in.owed), coef: in.coef}
	switch {
	case strings.HasPrefix(op.Type, "c_allreduce_"):
		if !p.allReduce(op, xs[0], out) {
			out.unknown = true
		}
	case op.Type == "scale":
		s, b := attrFloat(op, "scale", 1), attrFloat(op, "bias", 0)
		if b != 0 {
			p.unknownOut(op, "a scale with a bias")
			return
		}
		out.coef *= s
	case op.Type == "c_identity" || op.Type == "c_broadcast" || op.Type == "assign":
	default:
		p.unknownOut(op, "an emitted "+op.Type+" the proof does not follow yet")
		return
	}
	p.write(outs[0], out)
}

func (p *prover) unknownOut(op *ir.Op, why string) {
	p.unproven(op, "", "%s", why)
	for a := range op.OutputNames {
		p.write(a, &value{unknown: true})
	}
}

// allReduce applies an all-reduce to out (X's value): its group must be
// the ranks along one mesh dim d of this rank, and it clears what X
// owes along d with the same reduction.
func (p *prover) allReduce(op *ir.Op, x string, out *value) bool {
	red, ok := map[string]ir.Reduce{"c_allreduce_sum": ir.ReduceSum, "c_allreduce_avg": ir.ReduceAvg,
		"c_allreduce_max": ir.ReduceMax, "c_allreduce_min": ir.ReduceMin}[op.Type]
	if !ok {
		p.unproven(op, x, "%s: a reduction the proof does not follow", op.Type)
		return false
	}
	ring, _ := ir.AsInt(op.Attrs.Get("ring_id"))
	grp := p.part.Group(int(ring))
	v := p.g.Var(x)
	if grp == nil || v == nil || v.Dist == nil {
		p.unproven(op, x, "ring %d is in no group, or %s has no dist", ring, x)
		return false
	}
	pm := p.part.Mesh(v.Dist.Mesh)
	if pm == nil {
		p.unproven(op, x, "mesh %s is not declared", v.Dist.Mesh)
		return false
	}
	d := -1
	for axis := range pm.Shape {
		if g, err := pm.Group(axis, p.rank); err == nil && slices.Equal(g, grp.Ranks) {
			d = axis
			break
		}
	}
	if d < 0 {
		p.refute(op, x, "ring %d is ranks %v, which are not this rank's group along any dim of mesh %s", ring, grp.Ranks, pm.Name)
		return false
	}
	i := slices.IndexFunc(out.owed, func(q ir.Partial) bool { return q.Dim == d })
	switch {
	case i >= 0 && out.owed[i].Reduce == red:
		out.owed = slices.Delete(out.owed, i, i+1)
	case i >= 0:
		p.refute(op, x, "%s owes %s over mesh dim %d (%s), which %s does not make", x, reduceName(out.owed[i].Reduce), d, pm.DimNames[d], op.Type)
		return false
	case red == ir.ReduceSum || red == ir.ReduceAvg:
		p.refute(op, x, "%s owes nothing over mesh dim %d (%s): %s of its equal copies is %s", x, d, pm.DimNames[d], reduceName(red),
			map[ir.Reduce]string{ir.ReduceSum: "n times it", ir.ReduceAvg: "itself, a collective for nothing"}[red])
		return false
	}
	return true
}

func reduceName(r ir.Reduce) string {
	return map[ir.Reduce]string{ir.ReduceSum: "a sum", ir.ReduceAvg: "an average", ir.ReduceMax: "a max", ir.ReduceMin: "a min"}[r]
}

func attrFloat(op *ir.Op, name string, def float64) float64 {
	if f, ok := ir.AsFloat(op.Attrs.Get(name)); ok {
		return f
	}
	return def
}
