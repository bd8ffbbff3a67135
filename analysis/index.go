package analysis

import (
	"runtime"
	"sort"

	"github.com/distpass/distpass/internal/par"
	"github.com/distpass/distpass/ir"
)

// Index resolves names, once for the other analyses: for each program
// of the module, it numbers the vars of every block in order, resolves
// every op arg to the var it names through the block parent chain (by
// the blocks' own name tables, ir.Block.VarIndex), and indexes the ops by
// id. The other analyses require it and work on its numbers rather than
// on names.
var Index = &Analyzer{
	Name: "index",
	Doc: "Index numbers the vars of each program, resolves every op arg " +
		"through the block parent chain, and indexes the ops by id.",
	Run: func(p *Inputs) (any, error) { return buildIndex(p.Module), nil },
}

// IndexInfo is the result of Index.
type IndexInfo struct {
	progs []*progIndex
}

// progIndex indexes one program. Vars are numbered by a global id (gid):
// block b's vars are gids blocks[b].varOff, ... in declaration order.
// Ops are numbered likewise (nil ops included): block b's op at position
// pos is op number blocks[b].opOff+pos. Op k's args, inputs then outputs
// in slot order, resolve to the gids args[argStart[k]:argStart[k+1]]
// (-1: no var of that name); its outputs start at outStart[k].
type progIndex struct {
	p        *ir.Program
	label    string // "main" or "startup"
	blocks   []blockIndex
	nvars    int32
	nops     int32
	argStart []int32
	outStart []int32
	args     []int32
	byID     *ir.OpIndex[int32] // 1 + the op number
}

type blockIndex struct {
	b      *ir.Block // nil for a nil block
	parent int32     // the parent when it is another block of the program, else -1
	varOff int32
	nvars  int32
	opOff  int32
}

func buildIndex(m *ir.Module) *IndexInfo {
	x := &IndexInfo{}
	if m == nil {
		return x
	}
	total := 0
	for _, p := range m.Programs() {
		total += p.NumOps()
	}
	// The programs are indexed at once when the module is large: they
	// share nothing but the module's op count.
	progs := []struct {
		p     *ir.Program
		label string
	}{{m.Main, "main"}, {m.Startup, "startup"}}
	out := make([]*progIndex, len(progs))
	limit := 1
	if total >= parallelResolveArgs/4 {
		limit = 2
	}
	par.Do(len(progs), limit, func(i int) {
		if progs[i].p != nil {
			out[i] = indexProgram(m, progs[i].p, progs[i].label)
		}
	})
	for _, pi := range out {
		if pi != nil {
			x.progs = append(x.progs, pi)
		}
	}
	return x
}

func indexProgram(m *ir.Module, p *ir.Program, label string) *progIndex {
	pi := &progIndex{p: p, label: label, blocks: make([]blockIndex, len(p.Blocks))}
	n := len(p.Blocks)
	var nvars, nops int
	for i, b := range p.Blocks {
		bi := &pi.blocks[i]
		bi.parent = -1
		bi.varOff, bi.opOff = int32(nvars), int32(nops)
		if b == nil {
			continue
		}
		bi.b = b
		bi.nvars = int32(b.NumVars())
		if i > 0 && b.Parent >= 0 && b.Parent < n && b.Parent != i {
			bi.parent = int32(b.Parent)
		}
		nvars += b.NumVars()
		nops += len(b.Ops)
	}
	pi.nvars, pi.nops = int32(nvars), int32(nops)

	// Size the arg table exactly: a walk over the ops costs less than
	// growing it.
	nargs := 0
	for _, b := range p.Blocks {
		if b == nil {
			continue
		}
		for _, op := range b.Ops {
			if op == nil {
				continue
			}
			for _, s := range op.Inputs {
				nargs += len(s.Args)
			}
			for _, s := range op.Outputs {
				nargs += len(s.Args)
			}
		}
	}
	pi.byID = ir.IndexOps(m, p, func(_ *ir.Op, bi, pos int) int32 { return pi.blocks[bi].opOff + int32(pos) + 1 })
	pi.argStart = make([]int32, nops+1)
	pi.outStart = make([]int32, nops)
	pi.args = make([]int32, nargs)
	// Where each op's args go: a walk in order. Then
	// the names are resolved, each op's into its own part of args, on
	// several cores when there are many.
	a, k := int32(0), int32(0)
	for _, b := range p.Blocks {
		if b == nil {
			continue
		}
		for _, op := range b.Ops {
			pi.argStart[k], pi.outStart[k] = a, a
			k++
			if op == nil {
				continue
			}
			for _, s := range op.Inputs {
				a += int32(len(s.Args))
			}
			pi.outStart[k-1] = a
			for _, s := range op.Outputs {
				a += int32(len(s.Args))
			}
		}
	}
	pi.argStart[k] = a
	workers := 1
	if nargs >= parallelResolveArgs {
		workers = min(runtime.GOMAXPROCS(0), 8)
	}
	if workers == 1 {
		pi.resolveOps(0, k)
		return pi
	}
	par.Do(workers, workers, func(w int) {
		pi.resolveOps(k*int32(w)/int32(workers), k*int32(w+1)/int32(workers))
	})
	return pi
}

// parallelResolveArgs is the arg count from which indexProgram resolves
// names on several cores: below it, starting them costs more.
const parallelResolveArgs = 1 << 15

// resolveOps resolves the args of ops number lo to hi-1 into pi.args.
// It only reads the blocks' name tables, so ranges may run at once.
func (pi *progIndex) resolveOps(lo, hi int32) {
	for bi := range pi.blocks {
		blk := &pi.blocks[bi]
		if blk.b == nil {
			continue
		}
		first, last := max(lo, blk.opOff), min(hi, blk.opOff+int32(len(blk.b.Ops)))
		for k := first; k < last; k++ {
			op := blk.b.Ops[k-blk.opOff]
			if op == nil {
				continue
			}
			a := pi.argStart[k]
			for _, side := range [2][]ir.Slot{op.Inputs, op.Outputs} {
				for _, s := range side {
					for _, name := range s.Args {
						pi.args[a] = pi.resolve(bi, name)
						a++
					}
				}
			}
		}
	}
}

// ref returns the block and position of op number k.
func (pi *progIndex) ref(k int32) OpRef {
	b := sort.Search(len(pi.blocks), func(i int) bool { return pi.blocks[i].opOff > k }) - 1
	return OpRef{int32(b), k - pi.blocks[b].opOff}
}

// opNum returns the number of the op at r, or -1 when there is none.
func (pi *progIndex) opNum(r OpRef) int32 {
	if r.Block < 0 || int(r.Block) >= len(pi.blocks) || pi.blocks[r.Block].b == nil ||
		r.Pos < 0 || int(r.Pos) >= len(pi.blocks[r.Block].b.Ops) {
		return -1
	}
	return pi.blocks[r.Block].opOff + r.Pos
}

// opArgs returns the gids of the inputs and of the outputs of the op at r.
func (pi *progIndex) opArgs(r OpRef) (ins, outs []int32) {
	k := pi.blocks[r.Block].opOff + r.Pos
	return pi.args[pi.argStart[k]:pi.outStart[k]], pi.args[pi.outStart[k]:pi.argStart[k+1]]
}

// prog returns the index of p, or nil when p is not one of the module's
// programs.
func (x *IndexInfo) prog(p *ir.Program) *progIndex {
	for _, pi := range x.progs {
		if pi.p == p {
			return pi
		}
	}
	return nil
}

// progNum returns the position of p in x.progs, or -1.
func (x *IndexInfo) progNum(p *ir.Program) int {
	for i, pi := range x.progs {
		if pi.p == p {
			return i
		}
	}
	return -1
}

// Lookup resolves name as an op of block would: in block, then in its
// ancestors. It reports false when no block of the chain declares it.
func (x *IndexInfo) Lookup(prog *ir.Program, block int, name string) (VarID, bool) {
	pi := x.prog(prog)
	if pi == nil {
		return VarID{}, false
	}
	gid := pi.resolve(block, name)
	if gid < 0 {
		return VarID{}, false
	}
	return pi.id(gid), true
}

// Var returns the var id names, or nil.
func (x *IndexInfo) Var(id VarID) *ir.Var {
	pi := x.prog(id.Prog)
	if pi == nil {
		return nil
	}
	gid := pi.exact(id.Block, id.Name)
	if gid < 0 {
		return nil
	}
	return pi.v(gid)
}

// AppendArgVars appends to dst the vars the args of the op at pos of
// block resolved to when the index was built, inputs then outputs in slot
// order (nil for a name the block chain did not declare), and reports
// whether the index has that op. A var is read from its block as it is
// now, so the answers hold while no block of prog has had a var removed
// or renamed (ir.Block.BindingsVersion); the op at pos, and the vars an
// op's names bind, are the caller's to vouch for once ops have moved or
// vars were added. The lowering uses it to skip looking up, one hash
// probe each, names the index resolved for every op already.
func (x *IndexInfo) AppendArgVars(dst []*ir.Var, prog *ir.Program, block, pos int) ([]*ir.Var, bool) {
	pi := x.prog(prog)
	if pi == nil || block < 0 || block >= len(pi.blocks) {
		return dst, false
	}
	blk := &pi.blocks[block]
	k := blk.opOff + int32(pos)
	if pos < 0 || k >= pi.nops || (block+1 < len(pi.blocks) && k >= pi.blocks[block+1].opOff) {
		return dst, false
	}
	own := blk.b.Vars()
	for _, gid := range pi.args[pi.argStart[k]:pi.argStart[k+1]] {
		var v *ir.Var
		switch i := gid - blk.varOff; {
		case gid < 0:
		case i >= 0 && i < blk.nvars: // the op's own block, the usual case
			if int(i) < len(own) {
				v = own[i]
			}
		default:
			v = pi.v(gid)
		}
		dst = append(dst, v)
	}
	return dst, true
}

// Op returns the ref of the op of prog with id (the first, if ids repeat).
func (x *IndexInfo) Op(prog *ir.Program, id int64) (OpRef, bool) {
	pi := x.prog(prog)
	if pi == nil {
		return OpRef{}, false
	}
	return pi.op(id)
}

// Locate returns the program of op and where op is in it.
func (x *IndexInfo) Locate(op *ir.Op) (*ir.Program, OpRef, bool) {
	if op == nil {
		return nil, OpRef{}, false
	}
	for _, pi := range x.progs {
		if r, ok := pi.op(op.ID); ok && r.Op(pi.p) == op {
			return pi.p, r, true
		}
	}
	return nil, OpRef{}, false
}

// NumVars returns the number of vars declared in all blocks of prog.
func (x *IndexInfo) NumVars(prog *ir.Program) int {
	if pi := x.prog(prog); pi != nil {
		return int(pi.nvars)
	}
	return 0
}

func (pi *progIndex) op(id int64) (OpRef, bool) {
	k, n := pi.byID.Get(id)
	if n == 0 {
		return OpRef{}, false
	}
	return pi.ref(k - 1), true
}

// resolve returns the gid of the var name resolves to from block bi
// through the parent chain, or -1.
func (pi *progIndex) resolve(bi int, name string) int32 {
	for steps := 0; bi >= 0 && bi < len(pi.blocks) && steps <= len(pi.blocks); steps++ {
		if gid := pi.exact(bi, name); gid >= 0 {
			return gid
		}
		bi = int(pi.blocks[bi].parent)
	}
	return -1
}

// exact returns the gid of the var name declared in block bi itself, or
// -1. A var the block declared after the index was built has no gid.
func (pi *progIndex) exact(bi int, name string) int32 {
	if bi < 0 || bi >= len(pi.blocks) || pi.blocks[bi].b == nil {
		return -1
	}
	b := &pi.blocks[bi]
	if i := int32(b.b.VarIndex(name)); i >= 0 && i < b.nvars {
		return b.varOff + i
	}
	return -1
}

// anyBlock returns the gid of the first var called name in block 0, 1, ...
func (pi *progIndex) anyBlock(name string) int32 {
	for i := range pi.blocks {
		if gid := pi.exact(i, name); gid >= 0 {
			return gid
		}
	}
	return -1
}

// blockOf returns the block that declares gid.
func (pi *progIndex) blockOf(gid int32) int {
	return sort.Search(len(pi.blocks), func(i int) bool { return pi.blocks[i].varOff > gid }) - 1
}

// v returns the var gid, or nil when the block has changed since.
func (pi *progIndex) v(gid int32) *ir.Var { return pi.varOf(pi.blockOf(gid), gid) }

// varOf is v of a gid of block bi.
func (pi *progIndex) varOf(bi int, gid int32) *ir.Var {
	b := &pi.blocks[bi]
	if vars := b.b.Vars(); int(gid-b.varOff) < len(vars) {
		return vars[gid-b.varOff]
	}
	return nil
}

func (pi *progIndex) id(gid int32) VarID {
	id := VarID{Prog: pi.p, Block: pi.blockOf(gid)}
	if v := pi.varOf(id.Block, gid); v != nil {
		id.Name = v.Name()
	}
	return id
}
