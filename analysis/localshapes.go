package analysis

import (
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/distpass/distpass/ir"
)

// localShapes memoises the analyzers LocalShapes makes, so that
// LocalShapes(3) == LocalShapes(3).
var localShapes struct {
	mu sync.Mutex
	m  map[int]*Analyzer
}

// LocalShapes returns the analyzer of the vars' local shapes on rank,
// named "local-shapes{rank=R}". Calls with the same rank return the same
// analyzer.
//
// A var's local shape is its shape with every dim that its dims_mapping
// maps to a mesh dim divided by that mesh dim's size; unmapped dims and
// dims of unknown size (-1) are kept. Splits are even, so the shape is
// the same on every rank of the mesh; the rank decides InMesh. A var of
// the startup program takes its shape and dist from the var of the same
// name in main's block 0 when there is one, as Paddle's partitioner does,
// and its own otherwise. A var without a dist keeps its shape.
//
// The analysis fails when a dist cannot be applied: an uneven split, a
// mapping that does not fit the tensor or the mesh, an unknown mesh; and
// when a shape's element count overflows int64. The error lists every
// such var, each named with its program and block.
func LocalShapes(rank int) *Analyzer {
	localShapes.mu.Lock()
	defer localShapes.mu.Unlock()
	if a := localShapes.m[rank]; a != nil {
		return a
	}
	if localShapes.m == nil {
		localShapes.m = make(map[int]*Analyzer)
	}
	a := &Analyzer{
		Name: "local-shapes{rank=" + strconv.Itoa(rank) + "}",
		Doc: "LocalShapes gives each var's shape on one rank (each mapped dim divided by its " +
			"mesh dim's size) and whether the rank is in the var's mesh.",
		Requires: []*Analyzer{Index},
		Run: func(p *Inputs) (any, error) {
			return buildLocalShapes(p.Module, p.Result(Index).(*IndexInfo), rank)
		},
	}
	localShapes.m[rank] = a
	return a
}

// LocalShape is a var's shape on one rank.
type LocalShape struct {
	Shape  []int64 // nil for a var of a no-shape type; must not be modified
	InMesh bool    // the var has a dist on a mesh that holds the rank
}

// LocalShapeInfo is the result of LocalShapes.
type LocalShapeInfo struct {
	Rank  int
	x     *IndexInfo
	progs []localProg // parallel to x.progs
}

// localProg holds one program's local shapes: var gid's dims are
// dims[off[gid]:off[gid+1]].
type localProg struct {
	off   []int32
	dims  []int64
	flags []uint8
}

const (
	lsShaped uint8 = 1 << iota // a dense tensor
	lsInMesh
)

func buildLocalShapes(m *ir.Module, x *IndexInfo, rank int) (*LocalShapeInfo, error) {
	if rank < 0 {
		return nil, fmt.Errorf("rank %d is negative", rank)
	}
	ls := &LocalShapeInfo{Rank: rank, x: x, progs: make([]localProg, len(x.progs))}
	if m == nil {
		return ls, nil
	}
	b := shapeBuilder{meshes: newMeshes(m), rank: rank, inMesh: make(map[*ir.ProcessMesh]bool, len(m.Meshes))}
	var mainPI *progIndex
	var mainLP *localProg
	for i, pi := range x.progs {
		lp := &ls.progs[i]
		if pi.p == m.Startup {
			b.program(pi, lp, mainPI, mainLP)
		} else {
			b.program(pi, lp, nil, nil)
		}
		if pi.p == m.Main {
			mainPI, mainLP = pi, lp
		}
	}
	if len(b.errs) > 0 {
		return nil, errors.Join(b.errs...)
	}
	return ls, nil
}

type shapeBuilder struct {
	meshes   meshes
	rank     int
	inMesh   map[*ir.ProcessMesh]bool
	lastMesh *ir.ProcessMesh
	lastIn   bool
	errs     []error
}

func (sb *shapeBuilder) contains(pm *ir.ProcessMesh) bool {
	if pm != sb.lastMesh {
		in, ok := sb.inMesh[pm]
		if !ok {
			in = pm.Contains(sb.rank)
			sb.inMesh[pm] = in
		}
		sb.lastMesh, sb.lastIn = pm, in
	}
	return sb.lastIn
}

// program fills lp with the local shapes of pi's vars. When mainPI is
// set, a var declared in main's block 0 too copies that var's result.
func (sb *shapeBuilder) program(pi *progIndex, lp *localProg, mainPI *progIndex, mainLP *localProg) {
	lp.off = make([]int32, pi.nvars+1)
	lp.dims = make([]int64, 0, 2*int(pi.nvars)+16)
	lp.flags = make([]uint8, pi.nvars)
	gid := 0
	for bi, b := range pi.p.Blocks {
		if b == nil {
			continue
		}
		for _, v := range b.Vars() {
			lp.off[gid] = int32(len(lp.dims))
			if v != nil {
				g := int32(-1)
				if mainPI != nil {
					g = mainPI.exact(0, v.Name())
				}
				if g >= 0 {
					lp.flags[gid] = mainLP.flags[g]
					lp.dims = pushAll(lp.dims, mainLP.dims[mainLP.off[g]:mainLP.off[g+1]]...)
				} else {
					lp.flags[gid] = sb.local(pi, bi, v, lp)
				}
			}
			gid++
		}
	}
	lp.off[gid] = int32(len(lp.dims))
}

// local appends v's local dims to lp.dims and returns its flags.
func (sb *shapeBuilder) local(pi *progIndex, bi int, v *ir.Var, lp *localProg) uint8 {
	if v.Type.Kind != ir.DenseTensor {
		return 0
	}
	shape := v.Type.Shape
	start := len(lp.dims)
	lp.dims = pushAll(lp.dims, shape...)
	if countOverflows(shape) {
		sb.fail(pi, bi, v, "shape "+fmtInts(shape)+": element count overflows int64")
		return lsShaped
	}
	d := v.Dist
	if d == nil {
		return lsShaped
	}
	pm := sb.meshes.get(d.Mesh)
	if pm == nil {
		sb.fail(pi, bi, v, "dist on unknown mesh "+quoteName(d.Mesh))
		return lsShaped
	}
	if !mappingFits(d.DimsMapping, shape, pm) {
		for _, msg := range mappingProblems(d.DimsMapping, shape, pm) {
			sb.fail(pi, bi, v, msg)
		}
		return lsShaped
	}
	local := lp.dims[start:]
	for i, e := range d.DimsMapping {
		if e >= 0 && local[i] > 0 && pm.Shape[e] > 0 {
			local[i] /= int64(pm.Shape[e])
		}
	}
	if sb.contains(pm) {
		return lsShaped | lsInMesh
	}
	return lsShaped
}

func (sb *shapeBuilder) fail(pi *progIndex, bi int, v *ir.Var, msg string) {
	sb.errs = append(sb.errs, ir.Violation{Program: pi.label, Block: bi, Var: v.Name(), Msg: msg})
}

// Of returns the local shape of the var name resolves to from block of
// prog.
func (l *LocalShapeInfo) Of(prog *ir.Program, block int, name string) (LocalShape, bool) {
	i := l.x.progNum(prog)
	if i < 0 {
		return LocalShape{}, false
	}
	g := l.x.progs[i].resolve(block, name)
	if g < 0 {
		return LocalShape{}, false
	}
	return l.progs[i].shape(g), true
}

// OfPos returns the local shape of the pos-th var of block's var table
// (ir.Block.Vars order), without a lookup by name: for a walk over every
// var.
func (l *LocalShapeInfo) OfPos(prog *ir.Program, block, pos int) (LocalShape, bool) {
	i := l.x.progNum(prog)
	if i < 0 {
		return LocalShape{}, false
	}
	bs := l.x.progs[i].blocks
	if block < 0 || block >= len(bs) || pos < 0 || pos >= int(bs[block].nvars) {
		return LocalShape{}, false
	}
	return l.progs[i].shape(bs[block].varOff + int32(pos)), true
}

// OfVar returns the local shape of the var id.
func (l *LocalShapeInfo) OfVar(id VarID) (LocalShape, bool) {
	i := l.x.progNum(id.Prog)
	if i < 0 {
		return LocalShape{}, false
	}
	g := l.x.progs[i].exact(id.Block, id.Name)
	if g < 0 {
		return LocalShape{}, false
	}
	return l.progs[i].shape(g), true
}

func (lp *localProg) shape(g int32) LocalShape {
	f := lp.flags[g]
	s := LocalShape{InMesh: f&lsInMesh != 0}
	if f&lsShaped != 0 {
		a, b := lp.off[g], lp.off[g+1]
		s.Shape = lp.dims[a:b:b]
	}
	return s
}
