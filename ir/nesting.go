package ir

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxBlockDepth is how deep a program's blocks may nest, counted in links:
// by parents (block 0 is at depth 0, a block whose parent is block 0 at
// depth 1, …) and by block refs (an op of block 0 that refers to block 1,
// whose op refers to block 2, nests block 2 two refs deep). Paddle
// programs nest a few levels. The limit keeps walks over the blocks
// short (a name resolves through its block's parent chain) and printed
// forms small (the MLIR twin indents every region), and no walk
// anywhere needs a deeper stack. Parse, DecodeJSON, the Paddle importers
// and Verify reject a deeper program (see CheckNesting).
const MaxBlockDepth = 1000

// CheckNesting returns nil, or a *Violation naming the first place where
// p's blocks nest deeper than MaxBlockDepth: the first block, in index
// order, whose parent chain is longer, or else the first op, in block and
// op order, whose block ref starts a longer chain of refs. Refs that
// cannot nest (to no block, to block 0, to the op's own block) and refs
// that close a cycle are left to Verify. It costs nothing on a program of
// at most MaxBlockDepth blocks, which cannot nest deeper.
func CheckNesting(p *Program) error {
	if v := nestingProblem(p); v != nil {
		return v
	}
	return nil
}

// nestingProblem is CheckNesting's work; it returns nil when p nests
// within the limit. The violation's Block is the block too deep by
// parents, or the block of the op whose ref chain is too long.
func nestingProblem(p *Program) *Violation {
	if p == nil || len(p.Blocks) <= MaxBlockDepth {
		return nil
	}
	if b, d := deepestParentChain(p.Blocks); b >= 0 {
		return &Violation{Program: p.Name, Block: b,
			Msg: fmt.Sprintf("nested %d blocks deep through its parents; the limit is %d", d, MaxBlockDepth)}
	}
	height := refHeights(p.Blocks)
	for ref := range blockRefs(p.Blocks) {
		if !nestable(p.Blocks, ref.from, ref.to) {
			continue
		}
		if d := int(height[ref.to]) + 1; d > MaxBlockDepth {
			return &Violation{Program: p.Name, Block: ref.from, OpID: ref.op.ID, OpType: ref.op.Type,
				Msg: fmt.Sprintf("attr %s: sub-blocks nest %d deep through block refs; the limit is %d", quoteName(ref.attr), d, MaxBlockDepth)}
		}
	}
	return nil
}

// nestable reports whether a ref from block bi to block r can nest r
// below bi: r is a block other than block 0 and bi.
func nestable(blocks []*Block, bi, r int) bool {
	return r > 0 && r < len(blocks) && r != bi && blocks[r] != nil
}

// deepestParentChain returns the first block whose parent chain has more
// than MaxBlockDepth links, and its length; or -1. A parent that is not
// another block ends a chain, and so does a cycle (Verify reports both).
// Each block is walked once.
func deepestParentChain(blocks []*Block) (int, int) {
	n := len(blocks)
	// depth[i] is 0 while unknown, -1 while on the current path, else
	// the block's depth + 1.
	depth := make([]int32, n)
	var path []int32
	for i := range blocks {
		if depth[i] != 0 {
			continue
		}
		path = path[:0]
		base := int32(0) // the stored depth of what the path hangs from
		for j := int32(i); ; {
			if d := depth[j]; d != 0 {
				if d > 0 {
					base = d
				}
				break // known, or a cycle back into the path
			}
			depth[j] = -1
			path = append(path, j)
			b := blocks[j]
			if j == 0 || b == nil || b.Parent < 0 || b.Parent >= n || b.Parent == int(j) {
				break // a root
			}
			j = int32(b.Parent)
		}
		for k := len(path) - 1; k >= 0; k-- {
			depth[path[k]] = base + int32(len(path)-k)
		}
	}
	for i, d := range depth {
		if int(d-1) > MaxBlockDepth {
			return i, int(d - 1)
		}
	}
	return -1, 0
}

// refHeights returns, for each block, the length of the longest chain of
// block refs that starts at its ops, following each block once: a ref
// back into the chain being walked (a cycle) is not followed. The walk
// keeps its own stack.
func refHeights(blocks []*Block) []int32 {
	n := len(blocks)
	adj := make([][]int32, n)
	for r := range blockRefs(blocks) {
		if nestable(blocks, r.from, r.to) {
			adj[r.from] = append(adj[r.from], int32(r.to))
		}
	}
	height := make([]int32, n)
	walkRefs(n, func(b int32) []int32 { return adj[b] },
		func(path []int32, _ int, to int32, seen refState) {
			if from := path[len(path)-1]; seen == refDone {
				height[from] = max(height[from], height[to]+1)
			}
		},
		func(path []int32) {
			if k := len(path); k > 1 {
				height[path[k-2]] = max(height[path[k-2]], height[path[k-1]]+1)
			}
		})
	return height
}

// refState is where a block is in walkRefs: not reached yet, on the path
// being walked, or done with.
type refState uint8

const (
	refUnseen refState = iota
	refOnStack
	refDone
)

// walkRefs walks the graph of n blocks whose block b refers to the blocks
// out(b) (asked once, as b is entered), depth first, from every block in
// index order, each block once, on its own stack: ref chains may be as
// deep as there are blocks. edge is called for every ref, with the path
// from the walk's root to the referring block (last) and the state its
// target had; leave, when not nil, as a block is done, with the path
// ending at it; i is the ref's position in out(from).
func walkRefs(n int, out func(b int32) []int32, edge func(path []int32, i int, to int32, seen refState), leave func(path []int32)) {
	state := make([]refState, n)
	var path []int32
	var refs [][]int32 // the refs of each block on the path
	var next []int     // and the next of them to follow
	for s := range int32(n) {
		if state[s] != refUnseen {
			continue
		}
		state[s] = refOnStack
		path, refs, next = append(path[:0], s), append(refs[:0], out(s)), append(next[:0], 0)
		for len(path) > 0 {
			top := len(path) - 1
			i := next[top]
			if i == len(refs[top]) {
				state[path[top]] = refDone
				if leave != nil {
					leave(path)
				}
				path, refs, next = path[:top], refs[:top], next[:top]
				continue
			}
			next[top]++
			to := refs[top][i]
			seen := state[to]
			edge(path, i, to, seen)
			if seen == refUnseen {
				state[to] = refOnStack
				path, refs, next = append(path, to), append(refs, out(to)), append(next, 0)
			}
		}
	}
}

// IsAncestor reports whether block a is a proper ancestor of block b: a
// block that b's parent chain reaches. Block 0 has no ancestors; the walk
// stops at a parent that is not a block, and after len(p.Blocks) steps
// on a cyclic chain.
func (p *Program) IsAncestor(a, b int) bool {
	n := len(p.Blocks)
	for steps := 0; steps < n && b > 0 && b < n && p.Blocks[b] != nil; steps++ {
		parent := p.Blocks[b].Parent
		if parent == b {
			return false
		}
		if parent == a {
			return true
		}
		b = parent
	}
	return false
}

// RefCycle is a cycle of block refs: the op in Block whose ref to a block,
// through attr Attr, closes it. Blocks lists the blocks around the cycle,
// starting and ending at the referred block.
type RefCycle struct {
	Block  int
	Op     *Op
	Attr   string
	Blocks []int
}

// Msg describes the cycle without its location, as Verify does:
//
//	attr sub_block: block refs form a cycle: 1 -> 2 -> 1
func (c RefCycle) Msg() string {
	var sb strings.Builder
	sb.WriteString("attr ")
	sb.WriteString(quoteName(c.Attr))
	sb.WriteString(": block refs form a cycle: ")
	bs := c.Blocks
	parts := make([]string, 0, min(len(bs), 9))
	for i, b := range bs {
		if len(bs) > 10 && i >= 4 && i < len(bs)-4 {
			if i == 4 {
				parts = append(parts, "…")
			}
			continue
		}
		parts = append(parts, strconv.Itoa(b))
	}
	sb.WriteString(strings.Join(parts, " -> "))
	return sb.String()
}

// RefCycles returns the cycles of block refs in p: a block whose ops
// refer, directly or through the blocks they refer to, back to it, so
// that it would own itself. Refs that are no nesting at all (to no block,
// to block 0, to the op's own block, to an ancestor of the op's block)
// are not followed; Verify reports those one by one. Each ref that closes
// a cycle is reported once, in the order of a walk from block 0 in block
// and op order.
func (p *Program) RefCycles() []RefCycle {
	n := len(p.Blocks)
	type ref struct {
		op   *Op
		attr string
	}
	var targets [][]int32 // the blocks each block's refs go to
	var refs [][]ref      // and the op and attr of each
	for r := range blockRefs(p.Blocks) {
		if !nestable(p.Blocks, r.from, r.to) || p.IsAncestor(r.to, r.from) {
			continue
		}
		if targets == nil {
			targets, refs = make([][]int32, n), make([][]ref, n)
		}
		targets[r.from] = append(targets[r.from], int32(r.to))
		refs[r.from] = append(refs[r.from], ref{r.op, r.attr})
	}
	if targets == nil {
		return nil
	}
	var out []RefCycle
	walkRefs(n, func(b int32) []int32 { return targets[b] },
		func(path []int32, i int, to int32, seen refState) {
			if seen != refOnStack {
				return
			}
			from := path[len(path)-1]
			e := refs[from][i]
			c := RefCycle{Block: int(from), Op: e.op, Attr: e.attr}
			k := len(path) - 1
			for path[k] != to {
				k--
			}
			for _, b := range path[k:] {
				c.Blocks = append(c.Blocks, int(b))
			}
			c.Blocks = append(c.Blocks, int(to))
			out = append(out, c)
		}, nil)
	return out
}

// blockRef is one block index in a block-ref attr of an op of block from.
type blockRef struct {
	from, to int
	op       *Op
	attr     string
}

// blockRefs yields every block ref of every op of blocks, in block, op
// and attr order (nil blocks and ops skipped).
func blockRefs(blocks []*Block) func(yield func(blockRef) bool) {
	return func(yield func(blockRef) bool) {
		for bi, b := range blocks {
			if b == nil {
				continue
			}
			for _, op := range b.Ops {
				if op == nil {
					continue
				}
				for _, a := range op.Attrs {
					var refs []int
					switch r := a.Value.(type) {
					case BlockRef:
						refs = []int{int(r)}
					case BlockRefs:
						refs = r
					}
					for _, r := range refs {
						if !yield(blockRef{bi, r, op, a.Name}) {
							return
						}
					}
				}
			}
		}
	}
}
