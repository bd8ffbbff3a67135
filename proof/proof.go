// Package proof proves, without running them, that per-rank programs
// compute the serial program they were partitioned from (issue 40;
// docs/static-proof.md is the design). It follows each rank's main and
// start-up programs op by op with an abstract value per var: which serial
// var's blocks it holds (a placement, or a layout of blocks between a
// reshard's helpers), the reductions it still owes along mesh dims, and
// the factor it carries; the op rules and the group table are the trust
// base, with the placements of the data-dependent MoE ops (Result.Trusted).
// Collectives are followed by their groups, sends by meeting their
// receives; what a rank takes a group's member to give is checked
// against what the member gave.
package proof

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
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
	// Trusted are the op types whose outputs' placements the proof took
	// from their rules without following the values (the data-dependent
	// MoE ops), sorted.
	Trusted []string
}

// TrustBase says what the result rests on besides the programs.
func (r *Result) TrustBase() string {
	s := "the op rules and the group table"
	if len(r.Trusted) > 0 {
		s += "; the placements the rules of the data-dependent " + strings.Join(r.Trusted, ", ") + " give"
	}
	return s
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
	return CheckEach(serial, ranks, func(i int) (*ir.Module, error) { return parts[i], nil })
}

// CheckEach proves the programs of ranks against serial, asking part for
// rank ranks[i]'s program when its proof begins and holding it no longer
// than that proof needs: a rank that receives keeps its program until
// its sender has sent, the others let it go when they end.
func CheckEach(serial *ir.Module, ranks []int, part func(i int) (*ir.Module, error)) (*Result, error) {
	if serial.Main == nil || len(serial.Main.Blocks) == 0 {
		return nil, fmt.Errorf("the serial module has no main program")
	}
	res := &Result{}
	post := &postOffice{box: map[mailbox][]*value{}}
	mainFacts := newFacts(serial, serial.Main)
	var startFacts *serialFacts
	var (
		provers  []*prover // the main programs'
		waiting  []*prover // those not at their end
		startups []*prover
		groups   []ir.Group
	)
	for i, rank := range ranks {
		m, err := part(i)
		if err != nil {
			return nil, err
		}
		if m == nil || m.Main == nil || len(m.Main.Blocks) == 0 {
			return nil, fmt.Errorf("rank %d: no main program", rank)
		}
		if groups == nil {
			groups = m.Groups
		}
		// The start-up program first: its collectives precede the main
		// program's on every ring, and it sends nothing.
		switch {
		case serial.Startup == nil || len(serial.Startup.Blocks) == 0:
		case m.Startup == nil || len(m.Startup.Blocks) == 0:
			res.Findings = append(res.Findings, Finding{Rank: rank, Msg: "no startup program, and the serial module has one"})
		default:
			if startFacts == nil {
				startFacts = newFacts(serial, serial.Startup)
			}
			sp := newProver(startFacts, serial, serial.Startup, m, m.Startup, rank, post)
			sp.advance(true)
			startups = append(startups, sp)
		}
		p := newProver(mainFacts, serial, serial.Main, m, m.Main, rank, post)
		provers = append(provers, p)
		waiting = append(waiting, p)
		// A rank that receives waits for its sender: follow the waiting
		// ranks in turn until none moves.
		for moved := true; moved; {
			moved = false
			for _, w := range waiting {
				if w.advance(false) {
					moved = true
				}
			}
			waiting = slices.DeleteFunc(waiting, func(w *prover) bool { return w.done })
		}
	}
	// One still waiting waits forever.
	for _, p := range waiting {
		for !p.done {
			p.advance(true)
		}
	}
	trusted := map[string]bool{}
	for _, p := range slices.Concat(startups, provers) {
		res.Findings = append(res.Findings, p.found...)
		for t := range p.trust {
			trusted[t] = true
		}
	}
	res.Trusted = slices.Sorted(maps.Keys(trusted))
	res.Findings = append(res.Findings, post.unreceived()...)
	res.Findings = append(res.Findings, crossRank(serial, groups, slices.Concat(startups, provers))...)
	return res, nil
}

// value is what a rank's var holds of its serial var src: its placement
// on mesh (dims), or, between a reshard's helpers, a layout of blocks;
// the reductions it owes along mesh dims (sorted by dim) and the factor
// it carries beside the serial value's block. unknown: the proof did not
// follow its writer.
type value struct {
	src     string
	mesh    string
	dims    []int
	lay     *layout
	owed    []ir.Partial
	coef    float64
	unknown bool
	written bool
	konst   *float64 // a constant a reshard's padding adds, not a block of a var
	from    sentFrom // a value in the mail: its sender's mesh and coordinates
}

type sentFrom struct {
	mesh  string
	coord []int
}

// serialFacts are what every rank's proof reads of one serial program,
// found once.
type serialFacts struct {
	byID map[int64]*ir.Op
	// computed are the serial vars an op computes (not data, params or
	// state): a rank reading one before writing it reads nothing.
	computed map[string]bool
	// lossCoef is the factor a rank's loss gradient carries: a loss
	// averaged over mesh dims of n ranks is seeded 1 on each, n times
	// its share of the serial loss's gradient (the sync's 1/n takes it).
	lossCoef float64
	// alias maps a serial reshard's output to its input.
	alias map[string]string
	// ruleOut holds, by serial op, the partials its rule gives its
	// outputs on its declared placement: the same on every rank.
	ruleOut map[int64][][]ir.Partial
	memo    ops.RuleMemo
}

func newFacts(serial *ir.Module, prog *ir.Program) *serialFacts {
	sg := prog.Global()
	f := &serialFacts{byID: make(map[int64]*ir.Op, len(sg.Ops)), computed: map[string]bool{}, alias: map[string]string{},
		ruleOut: map[int64][][]ir.Partial{}}
	read := map[string]bool{}
	for _, b := range prog.Blocks {
		for _, op := range b.Ops {
			f.byID[op.ID] = op
			if op.Type == "reshard" {
				if x, out := firstArg(op.Input("X")), firstArg(op.Output("Out")); x != "" && out != "" {
					f.alias[out] = x
				}
			}
			for _, s := range op.Inputs {
				for _, a := range s.Args {
					read[a] = true
				}
			}
			// Computed: written before the program reads it (a var read
			// first, updated in place, is an input).
			for a := range op.OutputNames {
				if v := prog.LookupVar(b, a); v != nil && !v.Persistable() && !v.Has(ir.FlagIsData) && !read[a] {
					f.computed[a] = true
				}
			}
		}
	}
	f.lossCoef = lossFactor(serial, sg)
	return f
}

type prover struct {
	*serialFacts
	serial *ir.Module
	sprog  *ir.Program
	sg     *ir.Block // the serial block being followed
	part   *ir.Module
	prog   *ir.Program
	g      *ir.Block // the rank's block being followed
	// entry, inside a sub-block, holds each var's value before the
	// sub-block first wrote it (nil: none).
	entry map[string]*value
	rank  int
	// startup: the programs are the startups, whose ops have no dists:
	// an initialiser writes its var's declared block.
	startup bool
	env     map[string]*value
	found   []Finding
	// calls are the collectives the rank issued, for the cross-rank check.
	calls  []call
	trust  map[string]bool // the op types whose placement the proof trusted
	onRing map[int64]int   // calls per ring so far
	post   *postOffice
	pc     int // the next op of the rank's block 0
	seen   map[int64]bool
	done   bool
	// scratch, reused op after op
	maps     [][]int
	partials [][]ir.Partial
	names    []string
	factors  []bool
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

func newProver(facts *serialFacts, serial *ir.Module, sp *ir.Program, part *ir.Module, rp *ir.Program, rank int, post *postOffice) *prover {
	g := rp.Global()
	p := &prover{serialFacts: facts, serial: serial, sprog: sp, sg: sp.Global(), part: part, prog: rp, g: g, rank: rank, startup: sp == serial.Startup,
		env: make(map[string]*value, g.NumVars()), post: post, trust: map[string]bool{}, seen: make(map[int64]bool, len(g.Ops))}
	p.sameDists()
	return p
}

// sameDists refutes a var of the rank declared with another dist than
// the serial module's: a reader of the rank's program takes the label
// for what the data is.
func (p *prover) sameDists() {
	for _, v := range p.g.Vars() {
		sv := p.sg.Var(v.Name())
		if sv == nil || sv.Dist == nil || v.Dist == nil {
			continue
		}
		a, b := slices.Clone(v.Dist.Partial), slices.Clone(sv.Dist.Partial)
		byDim := func(x, y ir.Partial) int { return x.Dim - y.Dim }
		slices.SortFunc(a, byDim)
		slices.SortFunc(b, byDim)
		if v.Dist.Mesh != sv.Dist.Mesh || !slices.Equal(v.Dist.DimsMapping, sv.Dist.DimsMapping) || !slices.Equal(a, b) {
			p.refute(nil, v.Name(), "declared %s, and the serial module declares %s", v.Dist, sv.Dist)
		}
	}
}

// advance follows the rank's ops until it ends, or waits for a send no
// rank has made yet (force: it takes the receive as unknown); it reports
// whether it followed any op.
func (p *prover) advance(force bool) bool {
	moved := false
	for ; p.pc < len(p.g.Ops); p.pc++ {
		op := p.g.Ops[p.pc]
		if op.Type == "recv_v2" && !p.receive(op, force) {
			return moved
		}
		moved = true
		force = false
		if op.Type == "recv_v2" {
			if id, ok := originOp(op); ok {
				p.seen[id] = true
			}
			continue
		}
		p.step(op)
	}
	if !p.done {
		p.done = true
		p.covers(p.seen)
		p.ends()
		// The rank's program is let go, and the scratch that names its vars.
		p.env, p.seen, p.part, p.g = nil, nil, nil, nil
		p.maps, p.partials, p.names, p.factors = nil, nil, nil, nil
	}
	return moved
}

// step follows op (but a receive, which advance takes).
func (p *prover) step(op *ir.Op) {
	if slices.Contains(ops.CommSetupTypes, op.Type) {
		return // a communicator's set-up moves no tensor
	}
	id, emitted := originOp(op)
	if sop := p.byID[op.ID]; !emitted && sop != nil && sop.Type == ops.ReshardType && op.Type != ops.ReshardType {
		id, emitted = op.ID, true // a reshard lowered in place, under its own id (by hand)
	}
	if emitted && !p.inPlace(op, id) {
		op, _ = ops.Classic(op) // Paddle's newer spelling of a collective
		p.seen[id] = true
		p.emitted(op)
	} else {
		p.seen[op.ID] = true
		p.kept(op)
	}
}

// rankVar and serialVar look var a up from the blocks being followed.
func (p *prover) rankVar(a string) *ir.Var   { return p.prog.LookupVar(p.g, a) }
func (p *prover) serialVar(a string) *ir.Var { return p.sprog.LookupVar(p.sg, a) }

// inPlace reports whether op, naming serial op id as its origin, is
// that op itself (the MoE exchanges keep their serial id).
func (p *prover) inPlace(op *ir.Op, id int64) bool {
	sop := p.byID[id]
	return id == op.ID && sop != nil && sop.Type == op.Type
}

// covers refutes a serial op on this rank's mesh that no op of the rank
// computes or lowers (origin_op).
func (p *prover) covers(seen map[int64]bool) {
	for _, b := range p.sprog.Blocks {
		p.coversBlock(b, seen)
	}
}

func (p *prover) coversBlock(b *ir.Block, seen map[int64]bool) {
	for _, op := range b.Ops {
		if seen[op.ID] {
			continue
		}
		mesh := ""
		switch {
		case op.Dist != nil:
			mesh = op.Dist.Mesh
		case p.startup:
			if d := p.declared(firstArg(op.Output("Out"))); d != nil {
				mesh = d.Mesh
			}
		}
		if pm := p.serial.Mesh(mesh); pm == nil || !pm.Contains(p.rank) {
			continue
		}
		p.refute(nil, "", "the serial op %d %s has no counterpart on this rank", op.ID, op.Type)
	}
}

// declared returns the dist the serial module declares for var a: its
// own, or, for a startup var, the main program's.
func (p *prover) declared(a string) *ir.TensorDist {
	if v := p.serialVar(a); v != nil && v.Dist != nil {
		return v.Dist
	}
	if v := p.serial.Main.Global().Var(a); v != nil {
		return v.Dist
	}
	return nil
}

// lossFactor is the product of the sizes of the mesh dims the serial
// loss is averaged over.
func lossFactor(serial *ir.Module, sg *ir.Block) float64 {
	for _, op := range sg.Ops {
		if !op.Role.IsLoss() || op.Role.IsBackward() {
			continue
		}
		for a := range op.OutputNames {
			v := sg.Var(a)
			if v == nil || v.Dist == nil {
				return 1
			}
			pm := serial.Mesh(v.Dist.Mesh)
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
	v := p.rankVar(a)
	val := &value{src: a, coef: 1}
	if p.computed[a] {
		p.refute(nil, a, "read before this rank computes it (the serial program does)")
		val.unknown = true
		p.env[a] = val
		return val
	}
	switch {
	case v == nil:
		p.unproven(nil, a, "read, and the rank does not declare it")
		val.unknown = true
	case v.Dist == nil:
		p.unproven(nil, a, "read, and it has no dist: its blocks are not stated")
		val.unknown = true
	default:
		val.mesh, val.dims, val.owed = v.Dist.Mesh, v.Dist.DimsMapping, slices.Clone(v.Dist.Partial) // dims shared, never written
	}
	p.env[a] = val
	return val
}

// write records a's value. A serial var must hold a block of itself (or
// of what a serial reshard made it from), placed as the rank declares it:
// a layout of blocks settles into that placement when it is the same
// blocks on this rank, else it is refuted (a rank's temp keeps its
// layout).
func (p *prover) write(a string, v *value) {
	v.written = true
	if p.entry != nil {
		if _, ok := p.entry[a]; !ok {
			p.entry[a] = p.env[a]
		}
	}
	p.env[a] = v
	if v.unknown {
		return
	}
	serial := p.serialVar(a) != nil
	if serial && p.canon(v.src) != p.canon(a) {
		p.refute(nil, a, "holds a block of %s, not of %s", v.src, a)
		return
	}
	d := p.rankVar(a)
	if d == nil || d.Dist == nil {
		return
	}
	if !serial {
		// A rank's temp: what it holds is its value, whatever it declares;
		// blocks of another mesh, or laid out, become its placement when
		// they are the same blocks here.
		if v.lay != nil || v.mesh != d.Dist.Mesh {
			if c, ok := p.replaced(v, d.Dist.Mesh, d.Dist.DimsMapping); ok {
				*v = *c
			}
		}
		return
	}
	if p.partsOf(a, v, d.Dist) {
		return
	}
	if v.lay != nil {
		if !p.settle(v, d.Dist.Mesh, d.Dist.DimsMapping) {
			p.refute(nil, a, "holds %s, and the rank declares it %s: %s", p.blocks(v), ir.FormatInts(d.Dist.DimsMapping),
				p.blocks(&value{src: v.src, mesh: d.Dist.Mesh, dims: d.Dist.DimsMapping}))
		}
		return
	}
	if v.dims != nil && !p.placedAs(v, d.Dist.Mesh, d.Dist.DimsMapping) {
		p.refute(nil, a, "holds a block placed %s, and the rank declares it %s", ir.FormatInts(v.dims), ir.FormatInts(d.Dist.DimsMapping))
	}
}

// canon is the serial var whose value a holds serially: a reshard's
// output is its input's value.
func (p *prover) canon(a string) string {
	for i := 0; i < 64; i++ {
		x, ok := p.alias[a]
		if !ok {
			break
		}
		a = x
	}
	return a
}

// vocabParallel follows c_embedding and its grad, the vocabulary-parallel
// lookup of a serial lookup_table_v2 (origin_op): the lookup's rule
// gives the placements and the sum the rows off a rank's block owe; its
// start_index must be where this rank's block of W's rows begins.
func (p *prover) vocabParallel(op *ir.Op) {
	id, _ := originOp(op)
	sop := p.byID[id]
	w := p.serialVar(firstArg(op.Input("W")))
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
	case "send_v2":
		p.send(op)
		return
	case "split":
		p.split(op)
		return
	case "concat":
		p.concat(op)
		return
	case "slice":
		p.slice(op)
		return
	}
	xs, outs := op.Input("X"), op.Output("Out")
	if op.Type == "fill_constant" && len(xs) == 0 && len(outs) == 1 && len(op.Input("ValueTensor")) == 0 {
		// A constant (a padding's, added to zeros): its value, exactly
		// from str_value when it has one.
		k := attrFloat(op, "value", 0)
		if str, ok := op.Attrs.String("str_value"); ok && str != "" {
			if f, err := strconv.ParseFloat(str, 64); err == nil {
				k = f
			}
		}
		p.write(outs[0], &value{konst: &k, coef: 1})
		return
	}
	if len(xs) != 1 || len(outs) != 1 {
		p.unknownOut(op, "an emitted "+op.Type+" the proof does not follow yet")
		return
	}
	in := p.read(xs[0])
	if in.unknown {
		p.write(outs[0], &value{unknown: true})
		return
	}
	out := &value{src: in.src, mesh: in.mesh, dims: slices.Clone(in.dims), lay: in.lay, owed: slices.Clone(in.owed), coef: in.coef}
	switch {
	case strings.HasPrefix(op.Type, "c_") && op.Attrs.Get("ring_id") != nil:
		if !p.collective(op, xs[0], in, out) {
			out.unknown = true
		}
	case op.Type == "alltoall":
		if !p.collective(op, xs[0], in, out) {
			out.unknown = true
		}
	case op.Type == "scale":
		s, b := attrFloat(op, "scale", 1), attrFloat(op, "bias", 0)
		if b != 0 || len(op.Input("ScaleTensor")) > 0 {
			p.unknownOut(op, "a scale with a bias or a scale tensor")
			return
		}
		out.coef *= s
	case op.Type == "assign":
	case op.Type == "elementwise_add" && in.lay != nil && in.lay.allFill():
		// A padding made of a constant too wide for a float attr (an
		// integer's extreme): zeros plus the constant.
		y := p.read(firstArg(op.Input("Y")))
		if y.konst == nil {
			p.unknownOut(op, "a sum of a padding and no constant")
			return
		}
		l := &layout{seg: in.lay.seg, tiles: slices.Clone(in.lay.tiles)}
		for i := range l.tiles {
			l.tiles[i].val += *y.konst
		}
		out.lay = l
	case op.Type == "fill_any_like":
		// A reshard's padding: a constant shaped like X.
		l, err := p.layoutOf(in)
		if err != nil || len(op.Input("ValueTensor")) > 0 {
			p.unknownOut(op, "a fill of no known blocks, or by a tensor")
			return
		}
		out = &value{src: in.src, mesh: in.mesh, lay: l.filled(attrFloat(op, "value", 0)), coef: 1}
	case op.Type == "cast":
		// A cast keeps the blocks; it commutes with a max or a min still
		// owed (it is monotone), not with a sum's rounding.
		if slices.ContainsFunc(out.owed, func(q ir.Partial) bool { return q.Reduce != ir.ReduceMax && q.Reduce != ir.ReduceMin }) {
			p.unknownOut(op, "a cast of a value still owing a sum or an average")
			return
		}
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

func reduceName(r ir.Reduce) string {
	return map[ir.Reduce]string{ir.ReduceSum: "a sum", ir.ReduceAvg: "an average", ir.ReduceMax: "a max", ir.ReduceMin: "a min"}[r]
}

func attrFloat(op *ir.Op, name string, def float64) float64 {
	if f, ok := ir.AsFloat(op.Attrs.Get(name)); ok {
		return f
	}
	return def
}

// blocks prints v's blocks on this rank.
func (p *prover) blocks(v *value) string {
	l, err := p.layoutOf(v)
	if err != nil {
		return "blocks of " + v.src
	}
	if v.mesh != "" {
		if c, _, err := p.coordOn(v.mesh); err == nil {
			l = l.at(c)
		}
	}
	return "the blocks " + l.String()
}

// placement prints where v's blocks are.
func (v *value) placement() string {
	if v.lay != nil {
		return "the blocks " + v.lay.String()
	}
	return ir.FormatInts(v.dims)
}
