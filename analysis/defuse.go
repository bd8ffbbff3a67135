package analysis

import (
	"slices"

	"github.com/distpass/distpass/ir"
)

// DefUse records, for every var of every program, the ops that define it
// (name it as an output) and the ops that use it (name it as an input).
var DefUse = &Analyzer{
	Name: "def-use",
	Doc: "DefUse lists, for each var, the ops that write it and the ops that read it, " +
		"with names resolved through the block parent chain.",
	Requires: []*Analyzer{Index},
	Run: func(p *Inputs) (any, error) {
		return buildDefUse(p.Result(Index).(*IndexInfo)), nil
	},
}

// DefUseInfo is the result of DefUse.
//
// A var's defs and uses are recorded against the var an arg resolves to,
// through the parent chain: a use in block 1 of a var declared in block 0
// is a use of the block-0 var, listed with the uses in block 0. Each list
// is in program order (block index, then position) and names an op once
// however many of its args name the var. An op that updates a var in
// place (sgd's ParamOut, increment) is both a def and a use; an op that
// owns a sub-block defines the loop-carried vars it lists as outputs, and
// the sub-block's ops that write them are defs too. Args that name no
// declared var are left out (Verify reports them).
type DefUseInfo struct {
	x     *IndexInfo
	progs []defUseProg // parallel to x.progs
}

// defUseProg holds one program's lists in compressed-row form: the defs
// of gid g are defs[defStart[g]:defStart[g+1]], and likewise the uses.
type defUseProg struct {
	defStart, useStart []int32
	defs, uses         []OpRef
}

func buildDefUse(x *IndexInfo) *DefUseInfo {
	d := &DefUseInfo{x: x, progs: make([]defUseProg, len(x.progs))}
	for i, pi := range x.progs {
		d.progs[i] = buildDefUseProg(pi)
	}
	return d
}

func buildDefUseProg(pi *progIndex) defUseProg {
	// Count, leaving out args that name no var and repeats within one
	// op's inputs or outputs: stamp[g] is 2k+1 when op k counted g as an
	// input, 2k+2 as an output.
	stamp := make([]int32, pi.nvars)
	defStart := make([]int32, pi.nvars+1)
	useStart := make([]int32, pi.nvars+1)
	count := func(args []int32, st int32, start []int32) {
		for _, g := range args {
			if g >= 0 && stamp[g] != st {
				stamp[g] = st
				start[g+1]++
			}
		}
	}
	for k := range pi.nops {
		count(pi.args[pi.argStart[k]:pi.outStart[k]], 2*k+1, useStart)
		count(pi.args[pi.outStart[k]:pi.argStart[k+1]], 2*k+2, defStart)
	}
	for g := range pi.nvars {
		defStart[g+1] += defStart[g]
		useStart[g+1] += useStart[g]
	}

	// Fill, in program order, with the same rule for repeats, using the
	// starts as cursors.
	du := defUseProg{
		defStart: defStart, useStart: useStart,
		defs: make([]OpRef, defStart[pi.nvars]),
		uses: make([]OpRef, useStart[pi.nvars]),
	}
	clear(stamp)
	fill := func(args []int32, st int32, next []int32, refs []OpRef, r OpRef) {
		for _, g := range args {
			if g >= 0 && stamp[g] != st {
				stamp[g] = st
				refs[next[g]] = r
				next[g]++
			}
		}
	}
	for bi := range pi.blocks {
		b := &pi.blocks[bi]
		if b.b == nil {
			continue
		}
		for pos := range int32(len(b.b.Ops)) {
			k := b.opOff + pos
			r := OpRef{int32(bi), pos}
			fill(pi.args[pi.argStart[k]:pi.outStart[k]], 2*k+1, useStart, du.uses, r)
			fill(pi.args[pi.outStart[k]:pi.argStart[k+1]], 2*k+2, defStart, du.defs, r)
		}
	}
	shiftStarts(defStart)
	shiftStarts(useStart)
	return du
}

func (d *DefUseInfo) lists(prog *ir.Program, block int, name string) (*defUseProg, int32) {
	i := d.x.progNum(prog)
	if i < 0 {
		return nil, -1
	}
	g := d.x.progs[i].resolve(block, name)
	if g < 0 {
		return nil, -1
	}
	return &d.progs[i], g
}

// Defs returns the ops that define the var name resolves to from block of
// prog, in program order. The slice must not be modified.
func (d *DefUseInfo) Defs(prog *ir.Program, block int, name string) []OpRef {
	du, g := d.lists(prog, block, name)
	if du == nil {
		return nil
	}
	return du.defs[du.defStart[g]:du.defStart[g+1]:du.defStart[g+1]]
}

// Uses returns the ops that use the var name resolves to from block of
// prog, in program order. The slice must not be modified.
func (d *DefUseInfo) Uses(prog *ir.Program, block int, name string) []OpRef {
	du, g := d.lists(prog, block, name)
	if du == nil {
		return nil
	}
	return du.uses[du.useStart[g]:du.useStart[g+1]:du.useStart[g+1]]
}

// DefsOf is Defs of the var id.
func (d *DefUseInfo) DefsOf(id VarID) []OpRef {
	du, g := d.exact(id)
	if du == nil {
		return nil
	}
	return du.defs[du.defStart[g]:du.defStart[g+1]:du.defStart[g+1]]
}

// UsesOf is Uses of the var id.
func (d *DefUseInfo) UsesOf(id VarID) []OpRef {
	du, g := d.exact(id)
	if du == nil {
		return nil
	}
	return du.uses[du.useStart[g]:du.useStart[g+1]:du.useStart[g+1]]
}

func (d *DefUseInfo) exact(id VarID) (*defUseProg, int32) {
	i := d.x.progNum(id.Prog)
	if i < 0 {
		return nil, -1
	}
	g := d.x.progs[i].exact(id.Block, id.Name)
	if g < 0 {
		return nil, -1
	}
	return &d.progs[i], g
}

// Users returns the ops, of op's program, that use a var op defines, in
// program order, each once. An op that reads a var it writes is one of
// its own users. It returns nil for an op of no program of the module.
func (d *DefUseInfo) Users(op *ir.Op) []OpRef {
	prog, ref, ok := d.x.Locate(op)
	if !ok {
		return nil
	}
	i := d.x.progNum(prog)
	pi, du := d.x.progs[i], &d.progs[i]
	_, outs := pi.opArgs(ref)
	var out []OpRef
	for _, g := range outs {
		if g >= 0 {
			out = append(out, du.uses[du.useStart[g]:du.useStart[g+1]]...)
		}
	}
	slices.SortFunc(out, compareRefs)
	return slices.Compact(out)
}

func compareRefs(a, b OpRef) int {
	if a.Block != b.Block {
		return int(a.Block - b.Block)
	}
	return int(a.Pos - b.Pos)
}
