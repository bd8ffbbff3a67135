package ir

import (
	"fmt"
	"slices"
)

// Reduce is the pending reduction of a partial value along a mesh dim.
type Reduce uint8

// The reductions a partial mesh dim may be waiting for.
const (
	ReduceSum Reduce = iota
	ReduceAvg
	ReduceMax
	ReduceMin
	numReduces
)

var reduceNames = [numReduces]string{"sum", "avg", "max", "min"}

func (r Reduce) String() string {
	if r < numReduces {
		return reduceNames[r]
	}
	return fmt.Sprintf("reduce(%d)", uint8(r))
}

// ParseReduce returns the reduction spelled s (sum, avg, max or min).
func ParseReduce(s string) (Reduce, bool) { return parseReduce(s) }

func parseReduce(s string) (Reduce, bool) {
	for r := ReduceSum; r < numReduces; r++ {
		if reduceNames[r] == s {
			return r, true
		}
	}
	return 0, false
}

// Partial says that a value is partial along mesh dim Dim: each rank holds
// a part and the logical value is their reduction by Reduce.
type Partial struct {
	Dim    int
	Reduce Reduce
}

// TensorDist is a tensor's distribution: the mesh it lives on, for each
// tensor dim the mesh dim it is split along (-1: replicated), the mesh
// dims along which it is partial, and the mesh dims along which its
// values are rank-local. Partial is kept sorted by Dim, Local ascending.
type TensorDist struct {
	Mesh        string
	DimsMapping []int
	Partial     []Partial
	// Local lists the mesh dims along which the tensor's values are
	// rank-local: integers that index each rank's own rows of a tensor
	// split along that mesh dim (MoE's dispatch positions, numbered
	// from each rank's own counts), not the serial tensor's. Such values
	// mean nothing on another rank: an op indexing rows by them must
	// read those rows split along the same mesh dim, and no reshard may
	// move them. Empty: the values are the serial program's.
	Local []int
}

// Clone returns a deep copy; nil stays nil.
func (d *TensorDist) Clone() *TensorDist {
	if d == nil {
		return nil
	}
	return &TensorDist{Mesh: d.Mesh, DimsMapping: slices.Clone(d.DimsMapping), Partial: slices.Clone(d.Partial), Local: slices.Clone(d.Local)}
}

// IsLocal reports whether the values are rank-local along any mesh dim.
func (d *TensorDist) IsLocal() bool { return d != nil && len(d.Local) > 0 }

// FormatPartial spells a partial state as the text format does, "[0,
// 1:avg]" (a sum is the default reduction).
func FormatPartial(ps []Partial) string {
	var p printer
	p.partial(ps)
	return string(p.buf)
}

// IsPartial reports whether the value is partial along any mesh dim.
func (d *TensorDist) IsPartial() bool { return d != nil && len(d.Partial) > 0 }

// ArgDist is the dims_mapping an op expects for one of its arguments.
type ArgDist struct {
	Name        string
	DimsMapping []int
}

// OpDist is an op's distribution: its mesh, the dims_mapping it expects for
// each input and output argument (by var name), and the dist-op
// implementation chosen for it.
type OpDist struct {
	Mesh      string
	ImplType  string
	ImplIndex int
	Recompute bool
	Inputs    []ArgDist
	Outputs   []ArgDist
}

// Clone returns a deep copy; nil stays nil.
func (d *OpDist) Clone() *OpDist {
	if d == nil {
		return nil
	}
	c := *d
	c.Inputs = cloneArgDists(d.Inputs)
	c.Outputs = cloneArgDists(d.Outputs)
	return &c
}

func cloneArgDists(as []ArgDist) []ArgDist {
	if as == nil {
		return nil
	}
	out := make([]ArgDist, len(as))
	for i, a := range as {
		out[i] = ArgDist{Name: a.Name, DimsMapping: slices.Clone(a.DimsMapping)}
	}
	return out
}

// InputMapping returns the dims_mapping the op expects for input var name.
func (d *OpDist) InputMapping(name string) ([]int, bool) { return findArgDist(d.Inputs, name) }

// OutputMapping returns the dims_mapping the op expects for output var name.
func (d *OpDist) OutputMapping(name string) ([]int, bool) { return findArgDist(d.Outputs, name) }

func findArgDist(as []ArgDist, name string) ([]int, bool) {
	for _, a := range as {
		if a.Name == name {
			return a.DimsMapping, true
		}
	}
	return nil, false
}

// String spells d as the text format does: "@world[0, -1] partial [1,
// 0:avg]", "@world[-1] local [0]".
func (d *TensorDist) String() string {
	var p printer
	p.tensorDist(d)
	return string(p.buf)
}
