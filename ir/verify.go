package ir

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/distpass/distpass/internal/par"
)

// Violation is one broken rule, located by program, block, op and var.
//
// Program is "main" or "startup" (the slot of the module, whatever the
// program's Name says), or "" for a module-level rule (meshes, groups, the
// params-grads list). Block is -1 when the rule is not about one block.
// OpID and OpType locate an op (both zero when the rule is not about an
// op; an op with a bad id keeps its bad id here). Var names the var the
// rule is about, also for op rules that mention a var in Msg.
type Violation struct {
	Program string // "main", "startup", or "" for module-level
	Block   int    // -1 when not in a block
	OpID    int64  // 0 when not about an op
	OpType  string
	Var     string // "" when not about a var
	Msg     string
}

// Error returns the location followed by the message:
//
//	main block 0: op 9 matmul_v2_grad: input X names undeclared var x2
//	main block 0: var h: dims_mapping [0, 0] uses mesh dim 0 twice
//	main: no blocks
//	mesh world: empty shape
//
// The op prefix is written when OpID or OpType is set; otherwise the var
// prefix when Var is set (an op rule about a var names it in Msg).
func (v Violation) Error() string {
	b := make([]byte, 0, 48+len(v.Msg))
	switch {
	case v.Program != "":
		b = append(b, v.Program...)
		if v.Block >= 0 {
			b = append(b, " block "...)
			b = strconv.AppendInt(b, int64(v.Block), 10)
		}
		b = append(b, ": "...)
	case v.Block >= 0:
		b = append(b, "block "...)
		b = strconv.AppendInt(b, int64(v.Block), 10)
		b = append(b, ": "...)
	}
	switch {
	case v.OpID != 0 || v.OpType != "":
		b = append(b, "op "...)
		b = strconv.AppendInt(b, v.OpID, 10)
		if v.OpType != "" {
			b = append(b, ' ')
			b = appendName(b, v.OpType)
		}
		b = append(b, ": "...)
	case v.Var != "":
		b = append(b, "var "...)
		b = appendName(b, v.Var)
		b = append(b, ": "...)
	}
	b = append(b, v.Msg...)
	return string(b)
}

// VerifyError lists every violation Verify found, in a deterministic
// order: module-level rules first, then the main program, then startup,
// each in block order and, within a block, the block's own rules, its
// vars in order, then its ops in order; a program's block-ref rules
// (ref cycles, reads under a block-owning op) follow its blocks', and
// startup's rule against main comes last.
type VerifyError struct {
	Violations []Violation
}

// Error returns one line per violation.
func (e *VerifyError) Error() string {
	var sb strings.Builder
	for i, v := range e.Violations {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(v.Error())
	}
	return sb.String()
}

// Verify checks m against the structural rules of the IR and returns nil,
// or a *VerifyError listing every violation. It does not modify m, so it
// may run on a module that other goroutines only read. Names resolve
// through the blocks' own tables, as Block.Var finds them.
//
// The rules:
//
//   - meshes: a non-empty shape of positive sizes holding at most
//     MaxMeshRanks processes, one unique dim name per dim, unique process
//     ids from 0 to MaxRank as many as the shape holds; unique non-empty
//     mesh names.
//   - groups: unique non-negative ids; non-empty, non-negative, unique,
//     ascending ranks.
//   - programs: main present; Name is the slot's name; Rank ≥ -1; blocks
//     present and non-nil; Index is the block's position; block 0 has
//     parent -1, every other block a parent that is another block, with no
//     cycle in the parent chain (reported once, at the cycle's first
//     block); Forward is -1 or another block; blocks nest at most
//     MaxBlockDepth deep (CheckNesting; a program nested deeper is not
//     checked further).
//   - module attrs: sorted, unique and with valid values.
//   - vars: non-empty names, unique per block; a known kind and known
//     flags; attrs sorted, unique and with valid values (no nil, no scalar
//     of an unknown type); a dense tensor has a valid
//     dtype, dims ≥ -1 and an element count that fits int64 (unknown dims
//     skipped), a lod level ≥ 0 and no elements; a no-shape kind has no
//     dtype, no shape, no lod level and no dist, and elements only as
//     Type describes them; a dist
//     names a mesh, maps each tensor dim to -1 or a mesh dim, no mesh dim
//     twice, and its partial dims are mesh dims, sorted, unique, not
//     mapped, with a known reduction.
//   - ops: id ≥ 1 and unique in the program; a type; a valid role; attrs
//     as for vars; block refs name a block of the program other than
//     block 0, the op's own and its ancestors, and no block refers back
//     to itself through the blocks its ops refer to (Program.RefCycles,
//     reported after the blocks' own violations); every arg, and every
//     var ref of an attr, names a var declared in the op's block or an
//     ancestor; fwd, when
//     set, is on a non-forward op and names a forward op of the same
//     program.
//   - op dists: a known mesh; impl index ≥ 0; each arg dist names an arg
//     of the op on the same side, with a mapping as long as the var's rank,
//     of -1 or mesh dims, no mesh dim twice.
//   - SSA: in each block a non-persistable var has at most one defining
//     op. An op does not define a var it also reads (in-place update), nor
//     a var that a block it refers to (transitively) writes (loop-carried).
//     No op reads a non-persistable, non-data var of its own block before
//     the op of that block that defines it (reported at the definition);
//     nor does an op of a block that an op O refers to (transitively) read
//     a var of O's block that only ops after O define, unless the blocks
//     under O wrote it first (reported at the var, after the blocks' own
//     violations); a var no op of its block defines is fed, and may be
//     read anywhere.
//   - persistables (main only): an op writing a persistable dense tensor
//     has the optimize or lrsched bit, or is a forward op and it is no
//     param (state: batch_norm's running statistics in place, a QAT
//     observer's scale), or a forward op that also reads it (updates it
//     in place) and it is not a trainable param, or refers to a block
//     that (transitively) writes it.
//   - startup against main: a var of startup's block 0 that main's block
//     0 also declares (partition-vars gives it main's local shape) has
//     the same type (kind; dtype and shape of a tensor), is persistable
//     when main's is and only then (the two programs share persistables
//     alone; param and persist may differ), and, when both have a dist,
//     the same mesh and dims_mapping.
//   - params-grads: each param is a persistable var of some block of
//     main, listed once; each non-empty grad a var of some block of main,
//     the grad of one param only, and no param of the list.
func Verify(m *Module) error { return VerifyWith(m, VerifyOptions{}) }

// VerifyOptions extends Verify with rules package ir does not know: what
// each op type means (package ops holds those).
type VerifyOptions struct {
	// NewOpCheck, when set, returns a check of one op, which Verify runs
	// on every op after its own rules. Verify runs the checks after its
	// walk, on several goroutines: it calls NewOpCheck once per goroutine
	// and each check it returns from that goroutine only. The problems a
	// check reports take the place in the list that the op's own
	// violations have, so the result does not depend on the goroutines.
	NewOpCheck func() OpCheck
}

// OpCheck checks one op of program p. ins and outs hold the vars of the
// op's input and output args, flattened in slot order (nil for a name
// that does not resolve); they are valid during the call only. It
// reports each problem through report, with the name of the var it is
// about ("" for none); the problem becomes a violation of the op.
type OpCheck func(p *Program, op *Op, ins, outs []*Var, report func(varName, msg string))

// VerifyWith is Verify with the extra rules of opts.
func VerifyWith(m *Module, opts VerifyOptions) error {
	if m == nil {
		return &VerifyError{Violations: []Violation{{Block: -1, Msg: "nil module"}}}
	}
	v := &verifier{m: m, newOpCheck: opts.NewOpCheck}
	if len(m.Attrs) > 0 && !attrsOK(m.Attrs) {
		for _, msg := range attrProblems(m.Attrs) {
			v.moduleErr("module " + msg)
		}
	}
	v.checkMeshes()
	v.checkGroups()
	var progs [2]*progState
	if m.Main == nil {
		v.moduleErr("no main program")
	} else {
		progs[0] = v.checkProgram(m.Main, "main", true)
		v.checkParamGrads(progs[0])
	}
	if m.Startup != nil {
		progs[1] = v.checkProgram(m.Startup, "startup", false)
		if progs[0] != nil {
			progs[1].checkAgainstMain(progs[0])
		}
	}
	out := v.mod
	for _, ps := range progs {
		if ps != nil {
			out = append(out, ps.out...)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return &VerifyError{Violations: out}
}

type verifier struct {
	m          *Module
	newOpCheck func() OpCheck
	meshes     []meshEntry    // first mesh of each name, in order
	meshIx     map[string]int // index into meshes, when there are many
	mod        []Violation    // module-level violations
}

type meshEntry struct {
	name string
	rank int
}

func (v *verifier) moduleErr(msg string) {
	v.mod = append(v.mod, Violation{Block: -1, Msg: msg})
}

// meshRank returns the number of dims of the mesh named name, or -1 when
// the module has no such mesh.
func (v *verifier) meshRank(name string) int {
	if v.meshIx != nil {
		if i, ok := v.meshIx[name]; ok {
			return v.meshes[i].rank
		}
		return -1
	}
	for i := range v.meshes {
		if v.meshes[i].name == name {
			return v.meshes[i].rank
		}
	}
	return -1
}

func (v *verifier) checkMeshes() {
	for i, pm := range v.m.Meshes {
		if pm == nil {
			v.moduleErr(fmt.Sprintf("meshes[%d] is nil", i))
			continue
		}
		subject := "mesh " + quoteName(pm.Name) + ": "
		if pm.Name == "" {
			subject = fmt.Sprintf("meshes[%d]: ", i)
			v.moduleErr(subject + "empty name")
		}
		if v.meshRank(pm.Name) >= 0 {
			v.moduleErr(subject + "declared twice")
		} else {
			v.meshes = append(v.meshes, meshEntry{pm.Name, len(pm.Shape)})
			if len(v.meshes) == 9 {
				v.meshIx = make(map[string]int, 2*len(v.m.Meshes))
				for j, e := range v.meshes {
					v.meshIx[e.name] = j
				}
			} else if v.meshIx != nil {
				v.meshIx[pm.Name] = len(v.meshes) - 1
			}
		}
		// Validate is the one definition of a well-formed mesh; its
		// messages already start with "mesh NAME: ".
		if err := pm.Validate(); err != nil {
			for _, e := range unjoin(err) {
				msg := e.Error()
				if pm.Name == "" {
					msg = subject + strings.TrimPrefix(msg, `mesh "": `)
				}
				v.moduleErr(msg)
			}
		}
	}
}

// countOf returns how many times x occurs in xs.
func countOf[T comparable](xs []T, x T) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

func (v *verifier) checkGroups() {
	ids := make(map[int]bool, len(v.m.Groups))
	for _, g := range v.m.Groups {
		subject := "group " + strconv.Itoa(g.ID) + ": "
		if g.ID < 0 {
			v.moduleErr(subject + "negative id")
		}
		if ids[g.ID] {
			v.moduleErr(subject + "declared twice")
		}
		ids[g.ID] = true
		if len(g.Ranks) == 0 {
			v.moduleErr(subject + "no ranks")
			continue
		}
		ascending := true
		seen := make(map[int]int, len(g.Ranks))
		for i, r := range g.Ranks {
			if r < 0 {
				v.moduleErr(fmt.Sprintf("%snegative rank %d", subject, r))
			}
			if i > 0 && r < g.Ranks[i-1] {
				ascending = false
			}
			seen[r]++
			if seen[r] == 2 {
				v.moduleErr(fmt.Sprintf("%srank %d listed twice", subject, r))
			}
		}
		if !ascending {
			v.moduleErr(fmt.Sprintf("%sranks %s not ascending", subject, FormatInts(g.Ranks)))
		}
	}
}

func (v *verifier) checkParamGrads(mainPS *progState) {
	if len(v.m.ParamGrads) == 0 || len(mainPS.blocks) == 0 {
		return
	}
	// Which params were listed, and which param each grad belongs to,
	// are kept by var id in main's SSA scratch, done with by now: defs'
	// stamp -1 marks a listed param, undef's stamp -2 a grad, with the
	// index of its first entry. Names no block declares go to a map.
	const paramMark, gradMark = -1, -2
	var undeclared map[string]bool // params listed so far
	var gradParam map[string]string
	gradIDs := make([]int32, len(v.m.ParamGrads)) // each entry's grad, for the last check
	for i, pg := range v.m.ParamGrads {
		if pg.Param == "" {
			v.moduleErr(fmt.Sprintf("grads: entry %d has no param", i))
		} else {
			gid, persist := mainPS.anyBlockVar(pg.Param)
			switch {
			case gid < 0:
				v.moduleErr("grads: param " + quoteName(pg.Param) + " is not declared")
			case !persist:
				v.moduleErr("grads: param " + quoteName(pg.Param) + " is not persistable")
			}
			twice := false
			if gid >= 0 {
				d := &mainPS.defs[gid]
				twice = d.stamp == paramMark
				d.stamp = paramMark
			} else {
				if undeclared == nil {
					undeclared = map[string]bool{}
				}
				twice = undeclared[pg.Param]
				undeclared[pg.Param] = true
			}
			if twice {
				v.moduleErr("grads: param " + quoteName(pg.Param) + " listed twice")
			}
		}
		gradIDs[i] = -1
		if pg.Grad == "" {
			continue
		}
		// One grad var for two params would give each the other's
		// gradient too: the optimizer would update both with it.
		first := ""
		gid, _ := mainPS.anyBlockVar(pg.Grad)
		gradIDs[i] = gid
		if gid < 0 {
			v.moduleErr("grads: grad " + quoteName(pg.Grad) + " of " + quoteName(pg.Param) + " is not declared")
			if gradParam == nil {
				gradParam = map[string]string{}
			}
			if p, ok := gradParam[pg.Grad]; ok {
				first = p
			} else {
				gradParam[pg.Grad] = pg.Param
			}
		} else if u := &mainPS.undef[gid]; u.stamp == gradMark {
			first = v.m.ParamGrads[u.pos].Param
		} else {
			u.stamp, u.pos = gradMark, int32(i)
		}
		if first != "" && first != pg.Param {
			v.moduleErr("grads: grad " + quoteName(pg.Grad) + " of " + quoteName(pg.Param) + " is also the grad of " + quoteName(first))
		}
	}
	// A param's grad is no param of the list (itself included): the
	// optimizer would step a param by another's value, or by its own.
	for i, pg := range v.m.ParamGrads {
		if gid := gradIDs[i]; gid >= 0 && mainPS.defs[gid].stamp == paramMark {
			v.moduleErr("grads: grad " + quoteName(pg.Grad) + " of " + quoteName(pg.Param) + " is a param of the list")
		}
	}
}

// progState is the verifier's state for one program. Everything here is
// allocated once per program or per block, never per op.
type progState struct {
	v      *verifier
	p      *Program
	label  string
	main   bool
	blocks []blockState
	ids    *OpIndex[uint8]
	first  *OpIndex[opRef] // first op of each id, built on the first need
	defs   []definer       // by global var id: the defining op in the current block
	undef  []definer       // by global var id: the first op of the current block to read it undefined
	out    []Violation

	hasRefs bool // some op refers to a block

	// Per-op scratch, reused.
	ins, outs []argRef
	readSet   map[int32]struct{}
	readSetOK bool

	// The op checks: the batch being filled, the worker checking the
	// full ones and the batches it is done with, what the checks found.
	batch  *opBatch
	check  OpCheck // the walk's own, on one core
	worker *par.Worker[*opBatch]
	free   chan *opBatch
	found  []foundOp
}

type blockState struct {
	b      *Block
	parent int32   // the parent when it is another block of the program, else -1
	off    int32   // global id of the block's first var
	dups   []int32 // positions of vars whose name an earlier var of the block has
	cyclic int32   // on a cycle of the parent chain: 1 + the cycle's first block; else 0
	cstate uint8   // cycle search state
	wstate uint8   // writes: 0 not computed, 1 computing, 2 done
	writes map[int32]struct{}
}

type opRef struct{ block, pos int32 }

// definer records the op (by position) that defines a var in the block
// whose stamp (index+1) is recorded; other stamps mean "none yet".
type definer struct{ stamp, pos int32 }

// argRef is an op argument resolved to its var: gid is the global var id
// (-1 and v nil when the name is undeclared).
type argRef struct {
	name string
	gid  int32
	v    *Var
}

// The verifier's value of an op id (ir.OpIndex): the first op with the
// id, and whether it is a forward op.
const (
	idPresent uint8 = 1 << iota
	idForward
)

func (v *verifier) checkProgram(p *Program, label string, isMain bool) *progState {
	ps := &progState{v: v, p: p, label: label, main: isMain}
	if p.Name != label {
		ps.blockErr(-1, "program is named "+quoteName(p.Name))
	}
	if p.Rank < -1 {
		ps.blockErr(-1, fmt.Sprintf("invalid rank %d", p.Rank))
	}
	n := len(p.Blocks)
	if n == 0 {
		ps.blockErr(-1, "no blocks")
		return ps
	}
	if v := nestingProblem(p); v != nil {
		// The rest is not checked: name lookups through a chain that
		// long would cost its length per name.
		v.Program = label
		ps.out = append(ps.out, *v)
		return ps
	}
	ps.blocks = make([]blockState, n)
	total := 0
	for i, b := range p.Blocks {
		bs := &ps.blocks[i]
		bs.parent = -1
		if b == nil {
			continue
		}
		bs.b = b
		if i > 0 && b.Parent >= 0 && b.Parent < n && b.Parent != i {
			bs.parent = int32(b.Parent)
		}
		bs.off = int32(total)
		total += len(b.vars)
		bs.findDups()
	}
	ps.findCycles()
	ps.ids = IndexOps(v.m, p, func(op *Op, _, _ int) uint8 {
		if op.Role.IsForward() {
			return idPresent | idForward
		}
		return idPresent
	})
	ps.defs = make([]definer, total)
	ps.undef = make([]definer, total)
	for i := range n {
		ps.checkBlock(i)
	}
	if ps.hasRefs {
		for _, c := range p.RefCycles() {
			ps.opErr(c.Block, c.Op, "", c.Msg())
		}
		ps.checkSubBlockReads()
	}
	if v.newOpCheck != nil {
		ps.finishOpChecks()
	}
	return ps
}

// checkSubBlockReads finds the reads, in the blocks an op refers to
// (transitively), of a temp of the op's own block that the block defines
// only after the op: the sub-block runs when the op does, and would see a
// value from nowhere. A read that the sub-block itself (or a block it
// refers to) writes first does not count, nor a var that no op of its
// block defines (it is fed). What a sub-block reads is found once per
// block and sub-block, however many ops refer to it.
func (ps *progState) checkSubBlockReads() {
	sr := subReads{ps: ps, memo: map[[2]int][]subRead{}, visiting: make([]bool, len(ps.blocks))}
	for bi := range ps.blocks {
		b := ps.blocks[bi].b
		if b == nil {
			continue
		}
		var firstDef map[int32]int32 // the block's vars -> position of their first definer
		for pos, op := range b.Ops {
			if op == nil {
				continue
			}
			for r := range op.SubBlocks {
				if !ps.validRef(bi, r) || !ps.p.IsAncestor(bi, r) {
					continue
				}
				for _, rd := range sr.of(bi, r) {
					if firstDef == nil {
						firstDef = ps.firstDefs(bi)
					}
					if d, ok := firstDef[rd.gid]; ok && d > int32(pos) {
						v := b.vars[rd.gid-ps.blocks[bi].off]
						ps.varErr(bi, v.name, fmt.Sprintf("read by %s in block %d (through %s) before %s defines it",
							opName(rd.op), rd.block, opName(op), opName(b.Ops[d])))
					}
				}
			}
		}
	}
}

// firstDefs maps each var of block bi that an op of the block writes to
// the position of the first such op.
func (ps *progState) firstDefs(bi int) map[int32]int32 {
	bs := &ps.blocks[bi]
	lo, hi := bs.off, bs.off+int32(len(bs.b.vars))
	m := map[int32]int32{}
	for pos, op := range bs.b.Ops {
		if op == nil {
			continue
		}
		for _, s := range op.Outputs {
			for _, a := range s.Args {
				if g, _ := ps.lookup(bi, a); g >= lo && g < hi {
					if _, seen := m[g]; !seen {
						m[g] = int32(pos)
					}
				}
			}
		}
	}
	return m
}

// subRead is the first read, under a block-owning op, of a var of the
// op's block that nothing under the op wrote before.
type subRead struct {
	gid   int32
	op    *Op // the reader
	block int // its block
}

// subReads finds and keeps, per (owner block, sub-block), the subReads of
// the sub-block and the blocks under it.
type subReads struct {
	ps       *progState
	memo     map[[2]int][]subRead
	visiting []bool
}

// of returns the first reads, in block r and the blocks it refers to, of
// vars of block owner (r's ancestor) that they do not write first.
func (sr *subReads) of(owner, r int) []subRead {
	key := [2]int{owner, r}
	if rs, ok := sr.memo[key]; ok {
		return rs
	}
	ob := &sr.ps.blocks[owner]
	w := subReadWalk{ps: sr.ps, lo: ob.off, hi: ob.off + int32(len(ob.b.vars)), visiting: sr.visiting, seen: map[int32]bool{}}
	w.walk(r)
	sr.memo[key] = w.reads
	return w.reads
}

// subReadWalk walks the blocks under one block-owning op, in the order
// they run, for reads of the owner block's vars (ids lo to hi).
type subReadWalk struct {
	ps       *progState
	lo, hi   int32
	visiting []bool
	seen     map[int32]bool // read or written so far: a later read is not first
	reads    []subRead
}

func (w *subReadWalk) walk(bi int) {
	ps := w.ps
	if w.visiting[bi] || ps.blocks[bi].b == nil {
		return // a ref cycle, reported already
	}
	w.visiting[bi] = true
	defer func() { w.visiting[bi] = false }()
	for _, op := range ps.blocks[bi].b.Ops {
		if op == nil {
			continue
		}
		for _, s := range op.Inputs {
			for _, a := range s.Args {
				gid, v := ps.lookup(bi, a)
				if v == nil || gid < w.lo || gid >= w.hi || v.Kind != KindVar || v.Flags&FlagIsData != 0 || w.seen[gid] {
					continue
				}
				w.seen[gid] = true
				w.reads = append(w.reads, subRead{gid, op, bi})
			}
		}
		for r := range op.SubBlocks {
			if ps.validRef(bi, r) {
				w.walk(r)
			}
		}
		for _, s := range op.Outputs {
			for _, a := range s.Args {
				if gid, _ := ps.lookup(bi, a); gid >= w.lo && gid < w.hi {
					w.seen[gid] = true
				}
			}
		}
	}
}

// findDups finds the vars whose name an earlier var of the block has:
// those the block's table does not hold.
func (bs *blockState) findDups() {
	b := bs.b
	if b.index.n == len(b.vars) {
		return // no nil var, no name twice
	}
	for i, v := range b.vars {
		if v != nil && b.varIndex(v.name) != int32(i) {
			bs.dups = append(bs.dups, int32(i))
		}
	}
}

// findCycles marks the blocks that lie on a cycle of parent links.
func (ps *progState) findCycles() {
	const (
		unseen = iota
		onPath
		done
	)
	var path []int32
	for i := range ps.blocks {
		if ps.blocks[i].cstate != unseen {
			continue
		}
		path = path[:0]
		j := int32(i)
		for j >= 0 && ps.blocks[j].cstate == unseen {
			ps.blocks[j].cstate = onPath
			path = append(path, j)
			j = ps.blocks[j].parent
		}
		if j >= 0 && ps.blocks[j].cstate == onPath {
			k := len(path) - 1
			for path[k] != j {
				k--
			}
			first := slices.Min(path[k:])
			for _, b := range path[k:] {
				ps.blocks[b].cyclic = first + 1
			}
		}
		for _, k := range path {
			ps.blocks[k].cstate = done
		}
	}
}

// parentCycle spells the cycle of parent links through block bi.
func (ps *progState) parentCycle(bi int) string {
	var sb strings.Builder
	sb.WriteString(strconv.Itoa(bi))
	for j, steps := int(ps.blocks[bi].parent), 0; steps < len(ps.blocks); steps++ {
		sb.WriteString(" -> ")
		sb.WriteString(strconv.Itoa(j))
		if j == bi {
			break
		}
		j = int(ps.blocks[j].parent)
	}
	return sb.String()
}

// lookup resolves name from block bi through its ancestors, like
// Program.LookupVar but without touching the blocks' indexes.
func (ps *progState) lookup(bi int, name string) (int32, *Var) {
	for steps := 0; bi >= 0 && steps <= len(ps.blocks); steps++ {
		bs := &ps.blocks[bi]
		if bs.b != nil {
			if i := bs.b.varIndex(name); i >= 0 {
				return bs.off + i, bs.b.vars[i]
			}
		}
		bi = int(bs.parent)
	}
	return -1, nil
}

// anyBlockVar returns the id of a var named name in some block, one
// that is persistable when there is such, or -1; and whether it is.
func (ps *progState) anyBlockVar(name string) (gid int32, persist bool) {
	gid = -1
	for i := range ps.blocks {
		bs := &ps.blocks[i]
		if bs.b == nil {
			continue
		}
		if j := bs.b.varIndex(name); j >= 0 {
			if bs.b.vars[j].Persistable() {
				return bs.off + j, true
			}
			if gid < 0 {
				gid = bs.off + j
			}
		}
	}
	return gid, false
}

func (ps *progState) blockErr(bi int, msg string) {
	ps.out = append(ps.out, Violation{Program: ps.label, Block: bi, Msg: msg})
}

func (ps *progState) varErr(bi int, name, msg string) {
	ps.out = append(ps.out, Violation{Program: ps.label, Block: bi, Var: name, Msg: msg})
}

func (ps *progState) opErr(bi int, op *Op, name, msg string) {
	ps.out = append(ps.out, Violation{Program: ps.label, Block: bi, OpID: op.ID, OpType: op.Type, Var: name, Msg: msg})
}

func (ps *progState) checkBlock(bi int) {
	bs := &ps.blocks[bi]
	b := bs.b
	n := len(ps.blocks)
	if b == nil {
		ps.blockErr(bi, "nil block")
		return
	}
	if b.Index != bi {
		ps.blockErr(bi, fmt.Sprintf("index %d does not match its position", b.Index))
	}
	switch {
	case bi == 0:
		if b.Parent != -1 {
			ps.blockErr(bi, fmt.Sprintf("global block has parent %d, want -1", b.Parent))
		}
	case b.Parent < 0 || b.Parent >= n:
		ps.blockErr(bi, fmt.Sprintf("parent %d is not a block", b.Parent))
	case b.Parent == bi:
		ps.blockErr(bi, "parent is itself")
	case bs.cyclic == int32(bi)+1:
		// Once per cycle, at its first block.
		ps.blockErr(bi, "parent chain is cyclic: "+ps.parentCycle(bi))
	}
	if b.Forward != -1 {
		if b.Forward < 0 || b.Forward >= n {
			ps.blockErr(bi, fmt.Sprintf("forward %d is not a block", b.Forward))
		} else if b.Forward == bi {
			ps.blockErr(bi, "forward is itself")
		}
	}

	d := 0
	for j, v := range b.vars {
		dup := d < len(bs.dups) && bs.dups[d] == int32(j)
		if dup {
			d++
		}
		ps.checkVar(bi, j, v, dup)
	}

	stamp := int32(bi + 1)
	for j, op := range b.Ops {
		if op == nil {
			ps.blockErr(bi, fmt.Sprintf("op at position %d is nil", j))
			continue
		}
		ps.checkOp(bi, j, op, stamp)
	}
}

func (ps *progState) checkVar(bi, pos int, v *Var, dup bool) {
	if v == nil {
		ps.blockErr(bi, fmt.Sprintf("var at position %d is nil", pos))
		return
	}
	if v.name == "" {
		ps.blockErr(bi, fmt.Sprintf("var at position %d has no name", pos))
	}
	if dup {
		ps.varErr(bi, v.name, "declared twice")
	}
	if v.Kind > KindParam {
		ps.varErr(bi, v.name, "unknown kind "+v.Kind.String())
	}
	if unknown := v.Flags &^ (1<<numFlags - 1); unknown != 0 {
		ps.varErr(bi, v.name, fmt.Sprintf("unknown flag bits %#x", uint16(unknown)))
	}
	if len(v.Attrs) > 0 && !attrsOK(v.Attrs) {
		if msgs := attrProblems(v.Attrs); msgs != nil {
			for _, msg := range msgs {
				ps.varErr(bi, v.name, msg)
			}
		}
	}
	t := &v.Type
	switch {
	case t.Kind == DenseTensor:
		if !t.DType.Valid() {
			if t.DType == DTypeInvalid {
				ps.varErr(bi, v.name, "no dtype")
			} else {
				ps.varErr(bi, v.name, "unknown dtype "+t.DType.String())
			}
		}
		if !shapeOK(t.Shape) {
			for _, msg := range shapeProblems(t.Shape) {
				ps.varErr(bi, v.name, msg)
			}
		}
		if t.LoD != 0 || t.Elems != nil {
			for _, msg := range typeExtraProblems(t) {
				ps.varErr(bi, v.name, msg)
			}
		}
		if v.Dist != nil {
			ps.checkTensorDist(bi, v)
		}
	case t.Kind >= numTypeKinds:
		ps.varErr(bi, v.name, "unknown type kind "+t.Kind.String())
	default:
		if t.DType != DTypeInvalid {
			ps.varErr(bi, v.name, t.Kind.String()+" has dtype "+t.DType.String())
		}
		if len(t.Shape) > 0 {
			ps.varErr(bi, v.name, t.Kind.String()+" has shape "+fmtInts64(t.Shape))
		}
		if v.Dist != nil {
			ps.varErr(bi, v.name, t.Kind.String()+" has a dist")
		}
		if t.HasLoD || t.LoD != 0 || t.Elems != nil {
			for _, msg := range typeExtraProblems(t) {
				ps.varErr(bi, v.name, msg)
			}
		}
	}
}

// typeExtraProblems checks a type's LoD level and elements (see Type).
func typeExtraProblems(t *Type) []string {
	var msgs []string
	switch {
	case t.Kind != DenseTensor && (t.HasLoD || t.LoD != 0):
		msgs = append(msgs, t.Kind.String()+" has a lod level")
	case t.LoD < 0:
		msgs = append(msgs, fmt.Sprintf("negative lod level %d", t.LoD))
	case t.LoD != 0 && !t.HasLoD:
		msgs = append(msgs, fmt.Sprintf("lod level %d without HasLoD", t.LoD))
	}
	if t.Elems == nil {
		return msgs
	}
	switch t.Kind {
	case DenseTensor:
		return append(msgs, "tensor has elements")
	case Reader, Tuple:
	case TensorArray, SelectedRows, StringKind, StringsKind, Vocab, SparseCOO, SparseCSR:
		if len(t.Elems) > 1 {
			msgs = append(msgs, fmt.Sprintf("%s has %d elements, want at most 1", t.Kind, len(t.Elems)))
		}
	default:
		return append(msgs, t.Kind.String()+" has elements")
	}
	for i := range t.Elems {
		e := &t.Elems[i]
		where := fmt.Sprintf("element %d of %s: ", i, t.Kind)
		if e.Elems != nil {
			msgs = append(msgs, where+"has elements")
		}
		if t.Kind == Tuple {
			if len(e.Shape) > 0 || e.HasLoD || e.LoD != 0 {
				msgs = append(msgs, where+"has a shape or lod level")
			}
			if e.Kind >= numTypeKinds || e.Kind != DenseTensor && e.DType != DTypeInvalid || e.DType >= numDTypes {
				msgs = append(msgs, where+"is neither a dtype nor a kind")
			}
			continue
		}
		if e.Kind != DenseTensor || !e.DType.Valid() {
			msgs = append(msgs, where+"is not a tensor with a dtype")
		}
		if !shapeOK(e.Shape) {
			for _, msg := range shapeProblems(e.Shape) {
				msgs = append(msgs, where+msg)
			}
		}
		if e.LoD < 0 || e.LoD != 0 && !e.HasLoD || e.HasLoD && t.Kind != TensorArray && t.Kind != Reader {
			msgs = append(msgs, where+"has an invalid lod level")
		}
	}
	return msgs
}

// shapeOK is the fast check of a dense shape: dims ≥ -1 and an element
// count (unknown dims skipped) that fits int64.
func shapeOK(shape []int64) bool {
	n := uint64(1)
	for _, d := range shape {
		if d < 0 {
			if d == -1 {
				continue
			}
			return false
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return false
		}
		n = lo
	}
	return true
}

func shapeProblems(shape []int64) []string {
	var msgs []string
	for i, d := range shape {
		if d < -1 {
			msgs = append(msgs, fmt.Sprintf("shape %s: dim %d is %d, below -1", fmtInts64(shape), i, d))
		}
	}
	if msgs == nil {
		msgs = append(msgs, fmt.Sprintf("shape %s: element count overflows int64", fmtInts64(shape)))
	}
	return msgs
}

func (ps *progState) checkTensorDist(bi int, v *Var) {
	d := v.Dist
	rank := ps.v.meshRank(d.Mesh)
	if rank < 0 {
		ps.varErr(bi, v.name, "dist on unknown mesh "+quoteName(d.Mesh))
	}
	if len(d.DimsMapping) != len(v.Type.Shape) {
		ps.varErr(bi, v.name, fmt.Sprintf("dims_mapping %s has length %d, tensor rank is %d", FormatInts(d.DimsMapping), len(d.DimsMapping), len(v.Type.Shape)))
	}
	if !mappingOK(d.DimsMapping, rank) {
		for _, msg := range mappingProblems(d.DimsMapping, rank, d.Mesh) {
			ps.varErr(bi, v.name, msg)
		}
	}
	if len(d.Partial) > 0 && !partialOK(d.Partial, d.DimsMapping, rank) {
		for _, msg := range partialProblems(d.Partial, d.DimsMapping, rank, d.Mesh) {
			ps.varErr(bi, v.name, msg)
		}
	}
	if len(d.Local) > 0 {
		for _, msg := range localProblems(d.Local, rank, d.Mesh, v.Type) {
			ps.varErr(bi, v.name, msg)
		}
	}
}

// localProblems checks a dist's rank-local mesh dims: in the mesh (of
// rank dims; -1: unknown mesh, range not checked), ascending, each
// once, and on an integer tensor, as positions are.
func localProblems(local []int, rank int, mesh string, t Type) []string {
	var msgs []string
	for i, k := range local {
		switch {
		case k < 0 && rank < 0:
			msgs = append(msgs, fmt.Sprintf("local dim %d is negative", k))
		case k < 0 || rank >= 0 && k >= rank:
			msgs = append(msgs, fmt.Sprintf("local dim %d outside [0, %d) of mesh %s", k, rank, quoteName(mesh)))
		}
		if i > 0 {
			if prev := local[i-1]; k == prev {
				msgs = append(msgs, fmt.Sprintf("local dim %d listed twice", k))
			} else if k < prev {
				msgs = append(msgs, fmt.Sprintf("local dims not sorted: %d before %d", prev, k))
			}
		}
	}
	if t.DType.Valid() && !t.DType.IsInteger() {
		msgs = append(msgs, fmt.Sprintf("local %s on a %s tensor: rank-local values are positions, which an integer tensor holds", FormatInts(local), t.DType))
	}
	return msgs
}

// mappingOK is the fast check of a dims_mapping against a mesh of rank
// dims (-1: unknown mesh, range not checked). False means "look closer":
// mappingProblems says what, if anything, is wrong.
func mappingOK(dm []int, rank int) bool {
	var seen uint64
	for _, d := range dm {
		if d == -1 {
			continue
		}
		if d < -1 || d >= 64 || rank >= 0 && d >= rank {
			return false
		}
		if seen&(1<<d) != 0 {
			return false
		}
		seen |= 1 << d
	}
	return true
}

func mappingProblems(dm []int, rank int, mesh string) []string {
	var msgs []string
	for i, d := range dm {
		switch {
		case rank >= 0 && (d < -1 || d >= rank):
			msgs = append(msgs, fmt.Sprintf("dims_mapping %s has entry %d outside [-1, %d) of mesh %s", FormatInts(dm), d, rank, quoteName(mesh)))
		case d < -1:
			msgs = append(msgs, fmt.Sprintf("dims_mapping %s has entry %d below -1", FormatInts(dm), d))
		}
		if d >= 0 && countOf(dm[:i], d) == 1 {
			msgs = append(msgs, fmt.Sprintf("dims_mapping %s uses mesh dim %d twice", FormatInts(dm), d))
		}
	}
	return msgs
}

func partialOK(ps []Partial, dm []int, rank int) bool {
	var mapped uint64
	for _, d := range dm {
		if d >= 0 && d < 64 {
			mapped |= 1 << d
		}
	}
	prev := -1
	for _, p := range ps {
		if p.Dim <= prev || p.Dim >= 64 || rank >= 0 && p.Dim >= rank || p.Reduce >= numReduces || mapped&(1<<p.Dim) != 0 {
			return false
		}
		prev = p.Dim
	}
	return true
}

func partialProblems(ps []Partial, dm []int, rank int, mesh string) []string {
	var msgs []string
	for i, p := range ps {
		switch {
		case p.Dim < 0 || rank >= 0 && p.Dim >= rank:
			if rank >= 0 {
				msgs = append(msgs, fmt.Sprintf("partial dim %d outside [0, %d) of mesh %s", p.Dim, rank, quoteName(mesh)))
			} else {
				msgs = append(msgs, fmt.Sprintf("partial dim %d is negative", p.Dim))
			}
		case countOf(dm, p.Dim) > 0:
			msgs = append(msgs, fmt.Sprintf("partial dim %d is also in dims_mapping %s", p.Dim, FormatInts(dm)))
		}
		if p.Reduce >= numReduces {
			msgs = append(msgs, fmt.Sprintf("partial dim %d has unknown reduction %s", p.Dim, p.Reduce))
		}
		if i > 0 {
			prev := ps[i-1].Dim
			if p.Dim == prev {
				msgs = append(msgs, fmt.Sprintf("partial dim %d listed twice", p.Dim))
			} else if p.Dim < prev {
				msgs = append(msgs, fmt.Sprintf("partial dims not sorted: %d before %d", prev, p.Dim))
			}
		}
	}
	return msgs
}

// attrProblems checks that attrs are sorted by name, unique, and have
// valid values. It returns nil when all is well.
func attrProblems(as Attrs) []string {
	var msgs []string
	for i, a := range as {
		if i > 0 {
			prev := as[i-1].Name
			if prev == a.Name {
				msgs = append(msgs, "attr "+quoteName(a.Name)+" set twice")
			} else if prev > a.Name {
				msgs = append(msgs, "attrs out of order: "+quoteName(prev)+" before "+quoteName(a.Name))
			}
		}
		switch v := a.Value.(type) {
		case nil:
			msgs = append(msgs, "attr "+quoteName(a.Name)+" has no value")
		case Scalar:
			if !v.Valid() {
				msgs = append(msgs, "attr "+quoteName(a.Name)+": invalid scalar")
			}
		case Scalars:
			for j, x := range v {
				if !x.Valid() {
					msgs = append(msgs, fmt.Sprintf("attr %s: element %d is an invalid scalar", quoteName(a.Name), j))
				}
			}
		}
	}
	return msgs
}

// attrsOK is the fast check of an attr list: sorted unique names with
// values of no kind that needs a closer look. False means "look closer":
// attrProblems says what, if anything, is wrong.
func attrsOK(as Attrs) bool {
	for i := range as {
		a := &as[i]
		if i > 0 && as[i-1].Name >= a.Name {
			return false
		}
		switch a.Value.(type) {
		case nil, Scalar, Scalars:
			return false
		}
	}
	return true
}

func (ps *progState) checkOp(bi, pos int, op *Op, stamp int32) {
	if op.ID < 1 {
		ps.opErr(bi, op, "", fmt.Sprintf("id %d is not positive (position %d in block)", op.ID, pos))
	} else if _, n := ps.ids.Get(op.ID); n > 1 {
		if first := ps.firstOp(op.ID); first != (opRef{int32(bi), int32(pos)}) {
			ps.opErr(bi, op, "", fmt.Sprintf("id already used by %s in block %d", opName(ps.p.Blocks[first.block].Ops[first.pos]), first.block))
		}
	}
	if op.Type == "" {
		ps.opErr(bi, op, "", fmt.Sprintf("empty type (position %d in block)", pos))
	}
	if !op.Role.Valid() {
		ps.opErr(bi, op, "", "invalid role "+op.Role.String())
	}

	// Attrs: order, values, block refs, var refs.
	ownsSub, varRefs, attrsBad := false, false, false
	for i := range op.Attrs {
		a := &op.Attrs[i]
		if i > 0 && op.Attrs[i-1].Name >= a.Name {
			attrsBad = true
		}
		switch a.Value.(type) {
		case BlockRef, BlockRefs:
			ownsSub = true
		case VarRef, VarRefs:
			varRefs = true
		case nil, Scalar, Scalars:
			attrsBad = true
		}
	}
	if attrsBad {
		for _, msg := range attrProblems(op.Attrs) {
			ps.opErr(bi, op, "", msg)
		}
	}
	if ownsSub {
		ps.hasRefs = true
		for _, a := range op.Attrs {
			switch r := a.Value.(type) {
			case BlockRef:
				ps.checkRef(bi, op, a.Name, int(r))
			case BlockRefs:
				for _, x := range r {
					ps.checkRef(bi, op, a.Name, x)
				}
			}
		}
	}

	if varRefs {
		for _, a := range op.Attrs {
			switch r := a.Value.(type) {
			case VarRef:
				ps.checkVarRef(bi, op, a.Name, string(r))
			case VarRefs:
				for _, x := range r {
					ps.checkVarRef(bi, op, a.Name, x)
				}
			}
		}
	}

	// Args resolve.
	ps.ins = ps.resolve(ps.ins[:0], bi, op, op.Inputs, "input ")
	ps.outs = ps.resolve(ps.outs[:0], bi, op, op.Outputs, "output ")
	ps.readSetOK = false

	if op.Fwd != 0 {
		if op.Role.IsForward() {
			ps.opErr(bi, op, "", fmt.Sprintf("forward op has fwd %d", op.Fwd))
		} else if bits, _ := ps.ids.Get(op.Fwd); bits&idPresent == 0 {
			ps.opErr(bi, op, "", fmt.Sprintf("fwd %d names no op", op.Fwd))
		} else if bits&idForward == 0 {
			r := ps.firstOp(op.Fwd)
			f := ps.p.Blocks[r.block].Ops[r.pos]
			ps.opErr(bi, op, "", fmt.Sprintf("fwd %d names %s, whose role %s is not forward", op.Fwd, opName(f), f.Role))
		}
	}

	if op.Dist != nil {
		ps.checkOpDist(bi, op)
	}
	if ps.v.newOpCheck != nil {
		ps.recordOpCheck(bi, op)
	}

	// SSA and persistable writes. A temp of this block read before any op
	// of the block defines it is remembered, and reported if a later op
	// does: the reader would see a value from nowhere.
	b := ps.blocks[bi].b
	lo, hi := ps.blocks[bi].off, ps.blocks[bi].off+int32(len(b.vars))
	for k := range ps.ins {
		in := &ps.ins[k]
		if v := in.v; v != nil && v.Kind == KindVar && in.gid >= lo && in.gid < hi && v.Flags&FlagIsData == 0 &&
			ps.defs[in.gid].stamp != stamp && ps.undef[in.gid].stamp != stamp {
			ps.undef[in.gid] = definer{stamp, int32(pos)}
		}
	}
	for k := range ps.outs {
		o := &ps.outs[k]
		v := o.v
		if v == nil {
			continue
		}
		if v.Kind == KindVar {
			d := &ps.defs[o.gid]
			if d.stamp == stamp && d.pos == int32(pos) {
				continue // the op lists the var twice
			}
			if ps.reads(o.gid) || ownsSub && ps.subWrites(bi, op, o.gid) {
				continue
			}
			if d.stamp != stamp {
				d.stamp, d.pos = stamp, int32(pos)
				if u := ps.undef[o.gid]; u.stamp == stamp && u.pos < int32(pos) {
					ps.varErr(bi, v.name, "read by "+opName(b.Ops[u.pos])+" before "+opName(op)+" defines it")
				}
				continue
			}
			ps.varErr(bi, v.name, "defined by "+opName(op)+" and "+opName(b.Ops[d.pos]))
			continue
		}
		if !ps.main || v.Type.Kind != DenseTensor || op.Role&(RoleOptimize|RoleLRSched) != 0 {
			continue
		}
		if ownsSub && ps.subWrites(bi, op, o.gid) {
			continue
		}
		if op.Role.IsForward() && ps.reads(o.gid) {
			// In place, as inference batch_norm updates its running
			// statistics; but no forward op updates what the optimizer
			// trains.
			if v.Kind != KindParam || v.Flags&FlagTrainable == 0 {
				continue
			}
			if !ps.writtenBefore(k) {
				ps.opErr(bi, op, v.name, "updates trainable parameter "+quoteName(v.name)+" in place but has role "+op.Role.String()+": only optimize or lrsched ops update what is trained")
			}
			continue
		}
		if ps.writtenBefore(k) {
			continue
		}
		if op.Role.IsForward() && v.Kind != KindParam {
			// State a forward op keeps, as quantisation-aware training's
			// scale observer writes its OutScale each step.
			continue
		}
		ps.opErr(bi, op, v.name, "writes persistable "+quoteName(v.name)+" but has role "+op.Role.String()+", not optimize or lrsched")
	}
}

// Op checks run in batches: a worker goroutine checks one batch while
// the walk fills the next, so that the ops and vars it reads are still
// in the caches the walk brought them into. A program smaller than a
// batch is checked on the walk's goroutine.
const opBatchSize = 1024

// opBatch is a batch of ops to check, each with the vars of its args.
// A checked batch is reused for the next.
type opBatch struct {
	ops  []pendingOp
	args []*Var
}

// pendingOp is an op to check: at is where its violations go in ps.out;
// its args' vars are the batch's args[lo:mid] (inputs) and args[mid:hi]
// (outputs).
type pendingOp struct {
	op          *Op
	block       int32
	at          int32
	lo, mid, hi int32
}

// foundOp is a problem an op check reported, and where it goes in ps.out.
type foundOp struct {
	at int32
	v  Violation
}

// recordOpCheck adds op, with the vars its args resolved to, to the
// current batch, and hands a full batch to the worker.
func (ps *progState) recordOpCheck(bi int, op *Op) {
	b := ps.batch
	if b == nil {
		select {
		case b = <-ps.free:
			b.ops, b.args = b.ops[:0], b.args[:0]
		default:
			b = &opBatch{ops: make([]pendingOp, 0, opBatchSize), args: make([]*Var, 0, 3*opBatchSize)}
		}
		ps.batch = b
	}
	lo := int32(len(b.args))
	for k := range ps.ins {
		b.args = append(b.args, ps.ins[k].v)
	}
	mid := int32(len(b.args))
	for k := range ps.outs {
		b.args = append(b.args, ps.outs[k].v)
	}
	b.ops = append(b.ops, pendingOp{op, int32(bi), int32(len(ps.out)), lo, mid, int32(len(b.args))})
	if len(b.ops) == opBatchSize {
		if runtime.GOMAXPROCS(0) == 1 {
			// One core: a worker would only take turns with the walk.
			if ps.check == nil {
				ps.check = ps.v.newOpCheck()
			}
			ps.checkBatch(ps.check, b)
			b.ops, b.args = b.ops[:0], b.args[:0]
			return
		}
		if ps.worker == nil {
			check := ps.v.newOpCheck()
			ps.free = make(chan *opBatch, opBatchesInFlight)
			ps.worker = par.NewWorker(opBatchesInFlight, func(b *opBatch) {
				ps.checkBatch(check, b)
				select {
				case ps.free <- b:
				default:
				}
			})
		}
		ps.worker.Send(b)
		ps.batch = nil
	}
}

// opBatchesInFlight is how many full batches may wait for the worker.
const opBatchesInFlight = 4

// checkBatch runs check on every op of b. Only one goroutine at a time
// checks batches: the worker, then the walk's once the worker is done.
func (ps *progState) checkBatch(check OpCheck, b *opBatch) {
	var pd *pendingOp
	report := func(name, msg string) {
		ps.found = append(ps.found, foundOp{pd.at, Violation{Program: ps.label, Block: int(pd.block), OpID: pd.op.ID, OpType: pd.op.Type, Var: name, Msg: msg}})
	}
	for k := range b.ops {
		pd = &b.ops[k]
		check(ps.p, pd.op, b.args[pd.lo:pd.mid:pd.mid], b.args[pd.mid:pd.hi:pd.hi], report)
	}
}

// finishOpChecks waits for the worker, checks the last batch, and puts
// each problem found in ps.out where the op's own violations are.
func (ps *progState) finishOpChecks() {
	if ps.worker != nil {
		ps.worker.Wait()
		ps.worker = nil
	}
	if b := ps.batch; b != nil {
		if ps.check == nil {
			ps.check = ps.v.newOpCheck()
		}
		ps.checkBatch(ps.check, b)
		ps.batch = nil
	}
	if len(ps.found) == 0 {
		return
	}
	// The batches were checked in op order, and so were their finds.
	out := make([]Violation, 0, len(ps.out)+len(ps.found))
	i := 0
	for _, f := range ps.found {
		for ; i < int(f.at); i++ {
			out = append(out, ps.out[i])
		}
		out = append(out, f.v)
	}
	ps.out = append(out, ps.out[i:]...)
}

// checkAgainstMain checks ps, the startup program, against main's
// block 0: see Verify's rule "startup against main".
func (ps *progState) checkAgainstMain(mainPS *progState) {
	if len(ps.blocks) == 0 || len(mainPS.blocks) == 0 || ps.blocks[0].b == nil || mainPS.blocks[0].b == nil {
		return
	}
	mb := &mainPS.blocks[0]
	vars := ps.blocks[0].b.vars
	for _, v := range vars {
		if v == nil {
			continue
		}
		if i := mb.b.varIndex(v.name); i >= 0 {
			ps.compareWithMain(v, mb.b.vars[i])
		}
	}
}

// compareWithMain checks startup's var v against main's mv of its name.
func (ps *progState) compareWithMain(v, mv *Var) {
	if mv == nil {
		return
	}
	t, mt := &v.Type, &mv.Type
	if t.Kind != mt.Kind || t.Kind == DenseTensor && (t.DType != mt.DType || !slices.Equal(t.Shape, mt.Shape)) {
		ps.varErr(0, v.name, "type "+t.String()+" differs from "+mt.String()+" in main block 0: main reads what startup initialises, and partition-vars would give it main's shape")
		return
	}
	if v.Persistable() != mv.Persistable() {
		ps.varErr(0, v.name, "a "+v.Kind.String()+" here but a "+mv.Kind.String()+" in main block 0: startup and main share only persistables, so main's would not hold what startup computes")
		return
	}
	if d, md := v.Dist, mv.Dist; d != nil && md != nil && (d.Mesh != md.Mesh || !slices.Equal(d.DimsMapping, md.DimsMapping)) {
		ps.varErr(0, v.name, "dist @"+quoteName(d.Mesh)+FormatInts(d.DimsMapping)+" differs from @"+quoteName(md.Mesh)+FormatInts(md.DimsMapping)+" in main block 0: partition-vars would give it main's")
	}
}

// writtenBefore reports whether outs[k]'s var is also an earlier output of the op.
func (ps *progState) writtenBefore(k int) bool {
	for _, o := range ps.outs[:k] {
		if o.gid == ps.outs[k].gid {
			return true
		}
	}
	return false
}

func opName(op *Op) string {
	return "op " + strconv.FormatInt(op.ID, 10) + " " + quoteName(op.Type)
}

// firstOp returns where the first op of the program with id is.
func (ps *progState) firstOp(id int64) opRef {
	if ps.first == nil {
		// Positions count from 1 here: opRef{0, 0} would mean "no op".
		ps.first = IndexOps(ps.v.m, ps.p, func(_ *Op, bi, pos int) opRef { return opRef{int32(bi), int32(pos) + 1} })
	}
	r, _ := ps.first.Get(id)
	return opRef{r.block, r.pos - 1}
}

func (ps *progState) checkRef(bi int, op *Op, attr string, r int) {
	switch {
	case r < 0 || r >= len(ps.blocks):
		ps.opErr(bi, op, "", fmt.Sprintf("attr %s: block %d does not exist", quoteName(attr), r))
	case r == 0:
		ps.opErr(bi, op, "", fmt.Sprintf("attr %s: refers to the global block", quoteName(attr)))
	case r == bi:
		ps.opErr(bi, op, "", fmt.Sprintf("attr %s: refers to its own block %d", quoteName(attr), r))
	case ps.p.IsAncestor(r, bi):
		ps.opErr(bi, op, "", fmt.Sprintf("attr %s: refers to block %d, an ancestor of its own block %d", quoteName(attr), r, bi))
	}
}

// checkVarRef checks that a var ref of attr names a var of the op's block
// chain.
func (ps *progState) checkVarRef(bi int, op *Op, attr, name string) {
	if _, v := ps.lookup(bi, name); v == nil {
		ps.opErr(bi, op, name, fmt.Sprintf("attr %s names undeclared var %s", quoteName(attr), quoteName(name)))
	}
}

// validRef reports whether an op of block bi may own block r.
func (ps *progState) validRef(bi, r int) bool {
	return r > 0 && r < len(ps.blocks) && r != bi && ps.blocks[r].b != nil
}

func (ps *progState) resolve(refs []argRef, bi int, op *Op, slots []Slot, side string) []argRef {
	for si := range slots {
		s := &slots[si]
		for _, a := range s.Args {
			gid, v := ps.lookup(bi, a)
			if v == nil {
				ps.opErr(bi, op, a, side+quoteName(s.Name)+" names undeclared var "+quoteName(a))
			}
			refs = append(refs, argRef{a, gid, v})
		}
	}
	return refs
}

// reads reports whether the current op reads the var gid.
func (ps *progState) reads(gid int32) bool {
	if len(ps.ins) <= 16 {
		for i := range ps.ins {
			if ps.ins[i].gid == gid {
				return true
			}
		}
		return false
	}
	if !ps.readSetOK {
		if ps.readSet == nil {
			ps.readSet = make(map[int32]struct{}, len(ps.ins))
		} else {
			clear(ps.readSet)
		}
		for i := range ps.ins {
			if ps.ins[i].gid >= 0 {
				ps.readSet[ps.ins[i].gid] = struct{}{}
			}
		}
		ps.readSetOK = true
	}
	_, ok := ps.readSet[gid]
	return ok
}

// subWrites reports whether a block that op (in block bi) refers to
// writes the var gid, directly or through blocks its ops refer to.
func (ps *progState) subWrites(bi int, op *Op, gid int32) bool {
	for _, a := range op.Attrs {
		switch r := a.Value.(type) {
		case BlockRef:
			if ps.validRef(bi, int(r)) {
				if _, ok := ps.writesOf(int(r))[gid]; ok {
					return true
				}
			}
		case BlockRefs:
			for _, x := range r {
				if ps.validRef(bi, x) {
					if _, ok := ps.writesOf(x)[gid]; ok {
						return true
					}
				}
			}
		}
	}
	return false
}

// writesOf returns the vars the ops of block bi write, with those of the
// blocks they refer to, transitively. A block reached again while its own
// set is being computed (refs that form a cycle) contributes nothing.
func (ps *progState) writesOf(bi int) map[int32]struct{} {
	bs := &ps.blocks[bi]
	if bs.wstate != 0 {
		return bs.writes
	}
	bs.wstate = 1
	w := make(map[int32]struct{})
	for _, op := range bs.b.Ops {
		if op == nil {
			continue
		}
		for _, s := range op.Outputs {
			for _, a := range s.Args {
				if gid, _ := ps.lookup(bi, a); gid >= 0 {
					w[gid] = struct{}{}
				}
			}
		}
		for r := range op.SubBlocks {
			if ps.validRef(bi, r) {
				for g := range ps.writesOf(r) {
					w[g] = struct{}{}
				}
			}
		}
	}
	bs.writes, bs.wstate = w, 2
	return w
}

func (ps *progState) checkOpDist(bi int, op *Op) {
	d := op.Dist
	rank := ps.v.meshRank(d.Mesh)
	if rank < 0 {
		ps.opErr(bi, op, "", "dist: unknown mesh "+quoteName(d.Mesh))
	}
	if d.ImplIndex < 0 {
		ps.opErr(bi, op, "", fmt.Sprintf("dist: negative impl index %d", d.ImplIndex))
	}
	ps.checkArgDists(bi, op, d.Inputs, ps.ins, "input", rank, d.Mesh)
	ps.checkArgDists(bi, op, d.Outputs, ps.outs, "output", rank, d.Mesh)
}

func (ps *progState) checkArgDists(bi int, op *Op, ads []ArgDist, refs []argRef, side string, rank int, mesh string) {
	next := 0 // arg dists usually follow the args' order
	for i := range ads {
		ad := &ads[i]
		k := -1
		for t := next; t < len(refs); t++ {
			if refs[t].name == ad.Name {
				k = t
				break
			}
		}
		if k >= 0 {
			next = k + 1
		} else {
			for t := 0; t < next && t < len(refs); t++ {
				if refs[t].name == ad.Name {
					k = t
					break
				}
			}
		}
		if k < 0 {
			ps.opErr(bi, op, ad.Name, "dist "+side+" "+quoteName(ad.Name)+": not an "+side+" of the op")
			continue
		}
		if v := refs[k].v; v != nil && len(ad.DimsMapping) != len(v.Type.Shape) {
			ps.opErr(bi, op, ad.Name, fmt.Sprintf("dist %s %s: dims_mapping %s has length %d, tensor rank is %d",
				side, quoteName(ad.Name), FormatInts(ad.DimsMapping), len(ad.DimsMapping), len(v.Type.Shape)))
		}
		if !mappingOK(ad.DimsMapping, rank) {
			for _, msg := range mappingProblems(ad.DimsMapping, rank, mesh) {
				ps.opErr(bi, op, ad.Name, "dist "+side+" "+quoteName(ad.Name)+": "+msg)
			}
		}
	}
}

func fmtInts64(xs []int64) string {
	var p printer
	p.ints64(xs)
	return string(p.buf)
}

// unjoin splits an errors.Join result into its errors.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
