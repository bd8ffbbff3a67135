package sim

import (
	"fmt"

	"github.com/distpass/distpass/ir"
)

// Shard returns rank's part of a global tensor distributed by dist over
// mesh: each tensor dim mapped to a mesh dim is cut into equal parts and
// the rank keeps the part at its coordinate. Partial dims do not cut.
func Shard(global *Tensor, dist *ir.TensorDist, mesh *ir.ProcessMesh, rank int) (*Tensor, error) {
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
