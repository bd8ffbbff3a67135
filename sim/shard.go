package sim

import (
	"fmt"
	"math"

	"github.com/distpass/distpass/ir"
)

// Shard returns rank's part of a global tensor distributed by dist over
// mesh: each tensor dim mapped to a mesh dim is cut into equal parts and
// the rank keeps the part at its coordinate. A partial value is then
// split along each partial mesh dim into parts that its reduction gives
// back (ReducePartial; splitPart says how). The parts differ from rank
// to rank, so that a consumer that reads one as the whole value is
// caught: check feeds a data var declared partial so.
func Shard(global *Tensor, dist *ir.TensorDist, mesh *ir.ProcessMesh, rank int) (*Tensor, error) {
	t, err := shard(global, dist, mesh, rank)
	if err != nil || dist == nil || len(dist.Partial) == 0 {
		return t, err
	}
	coord, err := mesh.Coord(rank)
	if err != nil {
		return nil, err
	}
	// Outermost first, as ReducePartial reduces the last innermost.
	for _, p := range dist.Partial {
		if p.Dim < 0 || p.Dim >= len(coord) {
			return nil, fmt.Errorf("partial mesh dim %d outside mesh %s", p.Dim, mesh.Name)
		}
		splitPart(t, p.Reduce, coord[p.Dim], mesh.Shape[p.Dim])
	}
	return t, nil
}

// splitPart turns t, in place, into part c of n whose reduction r over
// the n parts is t. A sum's parts are unequal shares plus offsets that
// cancel out (so that no kernel that is only positively homogeneous,
// such as relu, passes for linear); an average's are n times those; a
// max's (min's) are the value on the last rank and less (more) on the
// others (a bool's: false for a max, true for a min). Integer parts
// stay whole.
func splitPart(t *Tensor, r ir.Reduce, c, n int) {
	if n <= 1 {
		return
	}
	share := func(x float64, j, i int) float64 { // part j of x at element i, j < n-1
		p := x * 2 * float64(j+1) / float64(n*(n+1))
		if !t.DType.IsFloat() {
			p = math.Trunc(p)
		}
		return p + float64((j+1)*(1+i%3))
	}
	for i, x := range t.Data {
		switch r {
		case ir.ReduceSum, ir.ReduceAvg:
			if r == ir.ReduceAvg {
				x *= float64(n) // the parts' mean is x: their sum n·x
			}
			if c != n-1 {
				t.Data[i] = share(x, c, i)
				continue
			}
			rest := x
			for j := range n - 1 {
				rest -= share(x, j, i)
			}
			t.Data[i] = rest
		case ir.ReduceMax:
			if c != n-1 {
				t.Data[i] = x - float64(c+1)
				if t.DType == ir.Boolean {
					t.Data[i] = 0 // false: a bool's parts are bools
				}
			}
		case ir.ReduceMin:
			if c != n-1 {
				t.Data[i] = x + float64(c+1)
				if t.DType == ir.Boolean {
					t.Data[i] = 1
				}
			}
		}
	}
}

func shard(global *Tensor, dist *ir.TensorDist, mesh *ir.ProcessMesh, rank int) (*Tensor, error) {
	if dist == nil || len(dist.DimsMapping) == 0 {
		return global.Clone(), nil
	}
	if len(dist.DimsMapping) != global.Rank() {
		return nil, fmt.Errorf("dims_mapping %v does not fit shape %v", dist.DimsMapping, global.Shape)
	}
	coord, err := mesh.Coord(rank)
	if err != nil {
		return nil, err
	}
	t := global
	for d, axis := range dist.DimsMapping {
		if axis < 0 {
			continue
		}
		n := int64(mesh.Shape[axis])
		if t.Shape[d]%n != 0 {
			return nil, fmt.Errorf("dim %d of size %d does not split over %d", d, t.Shape[d], n)
		}
		size := t.Shape[d] / n
		c := int64(coord[axis])
		if t, err = t.Slice(d, c*size, (c+1)*size); err != nil {
			return nil, err
		}
	}
	if t == global {
		t = global.Clone()
	}
	return t, nil
}

// ReducePartial combines the local values of a partial var over the ranks
// that share rank's coordinates except on the partial mesh dims, with each
// dim's pending reduction: the value the serial program would hold in
// rank's shard. local maps ranks to their tensors. With several partial
// dims, each rank of the first dim's group contributes its value reduced
// over the others (a grad partial over both dp and sp is the mean of
// means).
func ReducePartial(local map[int]*Tensor, dist *ir.TensorDist, mesh *ir.ProcessMesh, rank int) (*Tensor, error) {
	t := local[rank]
	if t == nil {
		return nil, fmt.Errorf("rank %d has no value", rank)
	}
	if dist == nil || len(dist.Partial) == 0 {
		return t, nil
	}
	return reducePartial(local, dist.Partial, mesh, rank)
}

// reducePartial reduces rank's value over the partial dims ps, the first
// outermost.
func reducePartial(local map[int]*Tensor, ps []ir.Partial, mesh *ir.ProcessMesh, rank int) (*Tensor, error) {
	if len(ps) == 0 {
		t := local[rank]
		if t == nil {
			return nil, fmt.Errorf("rank %d has no value", rank)
		}
		return t, nil
	}
	pd := ps[0]
	group, err := mesh.Group(pd.Dim, rank)
	if err != nil {
		return nil, err
	}
	var out *Tensor
	for _, r := range group {
		o, err := reducePartial(local, ps[1:], mesh, r)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = o.Clone()
			continue
		}
		if len(o.Data) != len(out.Data) {
			return nil, fmt.Errorf("rank %d has no value of shape %v", r, out.Shape)
		}
		for i, v := range o.Data {
			switch pd.Reduce {
			case ir.ReduceSum, ir.ReduceAvg:
				out.Data[i] += v
			case ir.ReduceMax:
				out.Data[i] = max(out.Data[i], v)
			case ir.ReduceMin:
				out.Data[i] = min(out.Data[i], v)
			}
		}
	}
	if pd.Reduce == ir.ReduceAvg {
		for i := range out.Data {
			out.Data[i] /= float64(len(group))
		}
	}
	return out, nil
}
