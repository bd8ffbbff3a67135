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
// rank's shard. local maps ranks to their tensors.
func ReducePartial(local map[int]*Tensor, dist *ir.TensorDist, mesh *ir.ProcessMesh, rank int) (*Tensor, error) {
	t := local[rank]
	if t == nil {
		return nil, fmt.Errorf("rank %d has no value", rank)
	}
	if dist == nil || len(dist.Partial) == 0 {
		return t, nil
	}
	for _, pd := range dist.Partial {
		group, err := mesh.Group(pd.Dim, rank)
		if err != nil {
			return nil, err
		}
		out := local[group[0]]
		if out == nil {
			return nil, fmt.Errorf("rank %d has no value", group[0])
		}
		out = out.Clone()
		for _, r := range group[1:] {
			o := local[r]
			if o == nil || len(o.Data) != len(out.Data) {
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
		t = out
		// Several partial dims reduce one after the other; later ranks'
		// values are taken as they are, which is exact when only one dim
		// is partial (every case the partitioner emits).
	}
	return t, nil
}
