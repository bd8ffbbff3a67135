package spmd

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/distpass/distpass/ir"
)

// Reshape's sharding rule, after Paddle's phi SPMD rule for reshape
// (spmd_rules/reshape.cc and dim_trans.cc). Each output dim is described
// by a tree over input dims: the input dim itself, a flatten of several,
// one piece of a split of one of those, or a singleton (a size-1 dim that
// comes from nothing). A sharded input dim keeps its mesh dim only where
// that is exact: as the first member of a flatten, on the first piece of
// a split whose size divides by the mesh dim. Every other sharded input
// dim is asked to be replicated (-1 in the wanted mapping).
//
// Dynamic dims (-1). Paddle builds the trees with 256 for every unknown
// input dim, which can be wrong at run time: a sharding kept for 256 may
// not hold for the real size. We build the same trees, then keep a
// sharding from input dim i to output dim p only if it holds for every
// size of the unknown dims: the dims before i hold as many elements as
// the dims before p, and p's size divides by the mesh dim or equals i's
// (a sharded dim, known or not, is taken to divide as the input's
// mapping says). Sizes are products of the unknown input dims (symbols)
// for that. An output -1 at position p copies input dim p when that one
// is -1 (Paddle's 0 in attr shape); at most one other output -1 is what
// the other dims leave (the attr's -1), as the op table's reshape2 inference
// gives them. Where that does not determine the output's dims (e.g. [a,
// b] to [-1, 3]), nothing is kept sharded, which is always correct.
//
// Two more departures from Paddle, both only making the rule ask for
// more replication: a known input dim that its mesh dim does not divide
// keeps its sharding only into an output dim of the same size (Paddle
// flattens it into a bigger one, which splits elements differently), and
// a tensor with a zero-size dim is replicated. Co-sharding (one tensor
// dim on several mesh dims) does not exist in our dims_mapping.

// ReshapeSharding infers reshape's shardings forward, as Paddle's
// ReshapeInferSpmd does: from X's shape in and dims_mapping inMapping,
// Out's shape out and the mesh's dim sizes, it returns the dims_mapping
// the op wants of X (a dim it cannot keep sharded becomes -1) and Out's
// dims_mapping. out is Out's shape as the op table infers it from attr shape: a
// -1 in it is unknown, either a copy of X's unknown dim at the same index
// or the attr's -1 that X's unknown dims leave open. It fails on shapes
// that cannot hold the same elements and on a mapping that does not fit
// its shape or the mesh.
func ReshapeSharding(in []int64, inMapping []int, out []int64, mesh []int) (wantIn, outMapping []int, err error) {
	r, err := relateReshape(in, out)
	if err == nil {
		err = checkReshapeMapping(in, out, "X", in, inMapping, mesh)
	}
	if err != nil {
		return nil, nil, err
	}
	if r == nil {
		return reshapeReplicated(len(in)), reshapeReplicated(len(out)), nil
	}
	wantIn, outMapping = inferReshape2Way(r.in, r.out, r.inVal, r.outVal, inMapping, mesh)
	return wantIn, outMapping, nil
}

// ReshapeShardingReverse infers reshape's shardings backward, as Paddle's
// ReshapeInferSpmdReverse does: from Out's dims_mapping outMapping
// (shapes and mesh as for ReshapeSharding) it returns X's dims_mapping
// and the one the op wants of Out.
func ReshapeShardingReverse(in []int64, out []int64, outMapping []int, mesh []int) (inMapping, wantOut []int, err error) {
	r, err := relateReshape(in, out)
	if err == nil {
		err = checkReshapeMapping(in, out, "Out", out, outMapping, mesh)
	}
	if err != nil {
		return nil, nil, err
	}
	if r == nil {
		return reshapeReplicated(len(in)), reshapeReplicated(len(out)), nil
	}
	wantOut, inMapping = inferReshape2Way(r.out, r.in, r.outVal, r.inVal, outMapping, mesh)
	return inMapping, wantOut, nil
}

func reshapeReplicated(n int) []int {
	m := make([]int, n)
	for i := range m {
		m[i] = -1
	}
	return m
}

func reshapeErr(in, out []int64, format string, args ...any) error {
	return fmt.Errorf("reshape %s to %s: %s", ir.FormatShape(in), ir.FormatShape(out), fmt.Sprintf(format, args...))
}

func checkReshapeMapping(in, out []int64, slot string, shape []int64, m []int, mesh []int) error {
	for i, n := range mesh {
		if n < 1 {
			return reshapeErr(in, out, "mesh dim %d has size %d", i, n)
		}
	}
	if len(m) != len(shape) {
		return reshapeErr(in, out, "%s dims_mapping %s has length %d, %s has %d dims", slot, ir.FormatInts(m), len(m), slot, len(shape))
	}
	used := make([]bool, len(mesh))
	for _, d := range m {
		switch {
		case d == -1:
		case d < -1 || d >= len(mesh):
			return reshapeErr(in, out, "%s dims_mapping %s uses mesh dim %d, the mesh has %d dims", slot, ir.FormatInts(m), d, len(mesh))
		case used[d]:
			return reshapeErr(in, out, "%s dims_mapping %s uses mesh dim %d twice", slot, ir.FormatInts(m), d)
		default:
			used[d] = true
		}
	}
	return nil
}

// reshapeSize is a dim size as coef times a product of the input's unknown
// dims: exp[k] is the power of the k-th -1 of X.
type reshapeSize struct {
	coef int64
	exp  []int
}

func (a reshapeSize) equal(b reshapeSize) bool {
	if a.coef != b.coef {
		return false
	}
	for k := range a.exp {
		if a.exp[k] != b.exp[k] {
			return false
		}
	}
	return true
}

func (a reshapeSize) known() bool {
	for _, e := range a.exp {
		if e != 0 {
			return false
		}
	}
	return true
}

// mul returns a*b, false on overflow.
func (a reshapeSize) mul(b reshapeSize) (reshapeSize, bool) {
	hi, lo := bits.Mul64(uint64(a.coef), uint64(b.coef))
	if hi != 0 || lo > 1<<62 {
		return reshapeSize{}, false
	}
	r := reshapeSize{coef: int64(lo), exp: make([]int, len(a.exp))}
	for k := range a.exp {
		r.exp[k] = a.exp[k] + b.exp[k]
	}
	return r, true
}

// div returns a/b, false unless it is a whole product.
func (a reshapeSize) div(b reshapeSize) (reshapeSize, bool) {
	if b.coef == 0 || a.coef%b.coef != 0 {
		return reshapeSize{}, false
	}
	r := reshapeSize{coef: a.coef / b.coef, exp: make([]int, len(a.exp))}
	for k := range a.exp {
		if r.exp[k] = a.exp[k] - b.exp[k]; r.exp[k] < 0 {
			return reshapeSize{}, false
		}
	}
	return r, true
}

func reshapeProduct(s []reshapeSize, nsym int) (reshapeSize, bool) {
	p := reshapeSize{coef: 1, exp: make([]int, nsym)}
	for _, d := range s {
		var ok bool
		if p, ok = p.mul(d); !ok {
			return reshapeSize{}, false
		}
	}
	return p, true
}

// reshapeShapes holds X's and Out's dims as symbolic sizes and as the
// numbers Paddle walks (256 for each unknown input dim).
type reshapeShapes struct {
	in, out       []reshapeSize
	inVal, outVal []int64
}

// reshapeDynamicDim is what Paddle takes an unknown input dim for.
const reshapeDynamicDim = 256

// relateReshape expresses in and out as symbolic sizes. It returns nil
// (and no error) where the rule keeps nothing sharded: a zero-size dim,
// or unknown dims that do not determine the output's dims.
func relateReshape(in, out []int64) (*reshapeShapes, error) {
	nsym, zero := 0, false
	for _, s := range [][]int64{in, out} {
		for _, d := range s {
			if d < -1 {
				return nil, reshapeErr(in, out, "dim %d is neither a size nor -1", d)
			}
			zero = zero || d == 0
		}
	}
	r := &reshapeShapes{in: make([]reshapeSize, len(in)), out: make([]reshapeSize, len(out))}
	for _, d := range in {
		if d == -1 {
			nsym++
		}
	}
	k := 0
	for i, d := range in {
		r.in[i] = reshapeSize{coef: d, exp: make([]int, nsym)}
		if d == -1 {
			r.in[i].coef = 1
			r.in[i].exp[k] = 1
			k++
		}
	}
	var fresh, paired []int
	for p, d := range out {
		switch {
		case d >= 0:
			r.out[p] = reshapeSize{coef: d, exp: make([]int, nsym)}
		case p < len(in) && in[p] == -1:
			r.out[p] = r.in[p]
			paired = append(paired, p)
		default:
			fresh = append(fresh, p)
		}
	}
	if len(fresh) > 1 {
		return nil, reshapeErr(in, out, "Out has %d -1 dims that copy no unknown dim of X", len(fresh))
	}
	if zero {
		if nsym == 0 && len(fresh) == 0 && prod(in) != prod(out) {
			return nil, reshapeErr(in, out, "X has %d elements, Out %d", prod(in), prod(out))
		}
		return nil, nil
	}
	total, ok := reshapeProduct(r.in, nsym)
	if !ok {
		if nsym == 0 {
			return nil, reshapeErr(in, out, "X has more than 2^62 elements")
		}
		return nil, nil
	}
	// solve sets Out's dim p to what the others leave of X's elements.
	solve := func(p int) bool {
		r.out[p] = reshapeSize{coef: 1, exp: make([]int, nsym)}
		rest, ok := reshapeProduct(r.out, nsym)
		if ok {
			r.out[p], ok = total.div(rest)
		}
		return ok
	}
	switch {
	case len(fresh) == 1:
		if !solve(fresh[0]) {
			if nsym == 0 {
				return nil, reshapeErr(in, out, "%d elements do not fill Out's -1 dim", total.coef)
			}
			return nil, nil
		}
	default:
		n, ok := reshapeProduct(r.out, nsym)
		if ok && n.equal(total) {
			break
		}
		if nsym == 0 {
			if !ok {
				return nil, reshapeErr(in, out, "Out has more than 2^62 elements")
			}
			return nil, reshapeErr(in, out, "X has %d elements, Out %d", total.coef, n.coef)
		}
		// One copied-looking -1 must be the attr's -1: only if exactly
		// one choice fits is it known which.
		found := -1
		for _, p := range paired {
			keep := r.out[p]
			if solve(p) {
				if found >= 0 {
					return nil, nil
				}
				found = p
			}
			r.out[p] = keep
		}
		if found < 0 {
			return nil, nil
		}
		solve(found)
	}
	var ok1, ok2 bool
	r.inVal, ok1 = reshapeEval(r.in)
	r.outVal, ok2 = reshapeEval(r.out)
	if !ok1 || !ok2 {
		return nil, nil
	}
	return r, nil
}

// reshapeEval gives each size its value with every unknown dim 256.
func reshapeEval(s []reshapeSize) ([]int64, bool) {
	v := make([]int64, len(s))
	for i, d := range s {
		v[i] = d.coef
		for _, e := range d.exp {
			for range e {
				hi, lo := bits.Mul64(uint64(v[i]), reshapeDynamicDim)
				if hi != 0 || lo > 1<<62 {
					return nil, false
				}
				v[i] = int64(lo)
			}
		}
	}
	return v, true
}

type reshapeTransKind uint8

const (
	reshapeInput     reshapeTransKind = iota // source dim .dim itself
	reshapeFlatten                           // .parts flattened, the first outermost
	reshapeSplit                             // piece .piece when .of is split into .sizes
	reshapeSingleton                         // a size-1 dim made of no source dim
)

// reshapeDimTrans says how one target dim is made of source dims.
type reshapeDimTrans struct {
	kind  reshapeTransKind
	dim   int
	parts []*reshapeDimTrans
	of    *reshapeDimTrans
	sizes []int64
	piece int
}

func (t *reshapeDimTrans) String() string {
	switch t.kind {
	case reshapeInput:
		return "InputDim(" + strconv.Itoa(t.dim) + ")"
	case reshapeFlatten:
		s := make([]string, len(t.parts))
		for i, p := range t.parts {
			s[i] = p.String()
		}
		return "Flatten(" + strings.Join(s, ",") + ")"
	case reshapeSplit:
		return fmt.Sprintf("Split(%v, %s, %d)", t.of, ir.FormatShape(t.sizes), t.piece)
	}
	return "Singleton()"
}

// reshapeTrans walks src and tgt (same element count, no zero dims)
// together, a group of each at a time until their products meet, and
// describes every tgt dim. Size-1 src dims are left out of flattens; a
// size-1 tgt dim is a singleton, except that a size-1 src dim met by a
// size-1 tgt dim stays that dim (so its mapping survives, as Paddle's
// newer rule has it).
func reshapeTrans(src, tgt []int64) ([]*reshapeDimTrans, bool) {
	var ret []*reshapeDimTrans
	si, ti := 0, 0
	for si < len(src) || ti < len(tgt) {
		var dims []int
		var sizes []int64
		s, t := int64(1), int64(1)
		if si < len(src) {
			s = src[si]
			dims = append(dims, si)
			si++
		}
		if ti < len(tgt) {
			t = tgt[ti]
			sizes = append(sizes, t)
			ti++
		}
		switch {
		case s == 1 && t != 1: // the src 1 goes alone; t waits
			if len(dims) == 0 {
				return nil, false
			}
			ti--
			sizes = nil
		case s != 1 && t == 1: // the tgt 1 is a singleton; s waits
			if len(sizes) == 0 {
				return nil, false
			}
			si--
			dims = nil
		default:
			for s != t {
				if s < t {
					if si >= len(src) {
						return nil, false
					}
					dims = append(dims, si)
					s *= src[si]
					si++
				} else {
					if ti >= len(tgt) {
						return nil, false
					}
					sizes = append(sizes, tgt[ti])
					t *= tgt[ti]
					ti++
				}
			}
		}
		if len(sizes) == 0 {
			continue
		}
		var parts []*reshapeDimTrans
		for _, d := range dims {
			if src[d] > 1 || s == 1 && t == 1 {
				parts = append(parts, &reshapeDimTrans{kind: reshapeInput, dim: d})
			}
		}
		var whole *reshapeDimTrans
		switch len(parts) {
		case 0:
			whole = &reshapeDimTrans{kind: reshapeSingleton}
		case 1:
			whole = parts[0]
		default:
			whole = &reshapeDimTrans{kind: reshapeFlatten, parts: parts}
		}
		for i, n := range sizes {
			switch {
			case len(sizes) == 1:
				ret = append(ret, whole)
			case n == 1:
				ret = append(ret, &reshapeDimTrans{kind: reshapeSingleton})
			default:
				// Paddle means to drop the 1s from sizes here but does not
				// (it tests sizes[id] for every i); piece 0 of a group of
				// several is never 1, so it changes nothing.
				ret = append(ret, &reshapeDimTrans{kind: reshapeSplit, of: whole, sizes: sizes, piece: i})
			}
		}
	}
	return ret, true
}

// inferReshape2Way carries srcMap from src to tgt (X to Out or Out to X;
// sizes symbolic and as Paddle's numbers): the mapping wanted of src and
// tgt's mapping.
func inferReshape2Way(src, tgt []reshapeSize, srcVal, tgtVal []int64, srcMap, mesh []int) (wantSrc, tgtMap []int) {
	wantSrc, tgtMap = reshapeReplicated(len(src)), reshapeReplicated(len(tgt))
	trans, ok := reshapeTrans(srcVal, tgtVal)
	if !ok || len(trans) != len(tgt) {
		return wantSrc, tgtMap
	}
	// target[i] is the tgt dim that may take src dim i's mapping; a src
	// dim with none (unused, or not first in a flatten) is replicated.
	target := reshapeReplicated(len(src))
	// lead returns the src dim whose mapping t can take, or -1: a flatten
	// offers its first member only, a split only on its first piece.
	var lead func(t *reshapeDimTrans) int
	lead = func(t *reshapeDimTrans) int {
		switch t.kind {
		case reshapeInput:
			return t.dim
		case reshapeFlatten:
			if p := t.parts[0]; p.kind == reshapeInput {
				return p.dim
			}
		case reshapeSplit:
			if t.piece == 0 {
				return lead(t.of)
			}
		}
		return -1
	}
	for p, t := range trans {
		if d := lead(t); d >= 0 {
			target[d] = p
		}
	}
	srcPrefix, ok1 := reshapePrefixes(src)
	tgtPrefix, ok2 := reshapePrefixes(tgt)
	for i, m := range srcMap {
		p := target[i]
		if m < 0 || p < 0 {
			continue
		}
		// Paddle's test of the split's first piece is reshapeExact's of
		// tgt dim p.
		if !ok1 || !ok2 || !reshapeExact(src[i], tgt[p], srcPrefix[i], tgtPrefix[p], int64(mesh[m])) {
			continue
		}
		wantSrc[i], tgtMap[p] = m, m
	}
	return wantSrc, tgtMap
}

// prefixes returns, for each dim, the product of the dims before it.
func reshapePrefixes(s []reshapeSize) ([]reshapeSize, bool) {
	nsym := 0
	if len(s) > 0 {
		nsym = len(s[0].exp)
	}
	pre := make([]reshapeSize, len(s))
	p := reshapeSize{coef: 1, exp: make([]int, nsym)}
	for i, d := range s {
		pre[i] = p
		var ok bool
		if p, ok = p.mul(d); !ok {
			return nil, false
		}
	}
	return pre, true
}

// reshapeExact reports whether sharding src dim d and tgt dim t on a mesh
// dim of size n gives every rank the same elements, whatever the unknown
// dims are: as many elements before both, and t the same size as d or
// both divisible by n (d when known; an unknown sharded d is taken to
// divide).
func reshapeExact(d, t, dPrefix, tPrefix reshapeSize, n int64) bool {
	if !dPrefix.equal(tPrefix) {
		return false
	}
	if d.equal(t) {
		return true
	}
	if d.known() && d.coef%n != 0 {
		return false
	}
	return t.coef%n == 0
}

// prod is the number of elements of a tensor of dims dims, or -1 when
// one of them is unknown.
func prod(dims []int64) int64 {
	p := int64(1)
	for _, d := range dims {
		if d < 0 {
			return -1
		}
		p *= d
	}
	return p
}
