package sim

import (
	"math/rand/v2"

	"github.com/distpass/distpass/ir"
)

// rng returns the generator of a random op: PCG seeded with (seed, 0).
func rng(op *ir.Op) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(attrInt(op, "seed", 0)), 0))
}

// randShape reads the shape and dtype (Paddle code, default f32) attrs.
func randShape(op *ir.Op) (ir.DType, []int64, error) {
	dt, err := dtypeAttr(op, "dtype", ir.F32)
	if err != nil {
		return 0, nil, err
	}
	shape, _ := attrInts(op, "shape")
	if err := checkShape(shape); err != nil {
		return 0, nil, errf(op, "%v", err)
	}
	return dt, shape, nil
}

// uniformRandom draws min + (max-min)*r.Float64() per element, row-major.
func uniformRandom(op *ir.Op, in Args) (Args, error) {
	lo, hi := attrFloat(op, "min", -1), attrFloat(op, "max", 1)
	return drawn(op, func(r *rand.Rand) float64 { return lo + (hi-lo)*r.Float64() })
}

// gaussianRandom draws mean + std*r.NormFloat64() per element, row-major.
func gaussianRandom(op *ir.Op, in Args) (Args, error) {
	mu, sd := attrFloat(op, "mean", 0), attrFloat(op, "std", 1)
	return drawn(op, func(r *rand.Rand) float64 { return mu + sd*r.NormFloat64() })
}

// drawn fills op's Out with draw's numbers, one per element in row-major
// order of the tensor the op draws: its shape, or its global_shape when it
// has one, of which it keeps the block at shard_offset (see shardIndex).
// The block's elements come in increasing global order, so the draws in
// between are made and dropped as the generator reaches them.
func drawn(op *ir.Op, draw func(*rand.Rand) float64) (Args, error) {
	dt, shape, err := randShape(op)
	if err != nil {
		return nil, err
	}
	idx, err := shardIndex(op, shape)
	if err != nil {
		return nil, err
	}
	r := rng(op)
	out := Zeros(dt, shape...)
	next := int64(0) // the global index of the generator's next draw
	for i := range out.Data {
		for g := idx(int64(i)); next < g; next++ {
			draw(r)
		}
		out.Data[i] = draw(r)
		next++
	}
	return out1("Out", out), nil
}

// shardIndex maps a linear index into op's drawn tensor of shape local to
// the linear index of the same element in the tensor of shape
// global_shape whose block at shard_offset it is: the identity when the
// op has no global_shape, as a serial op has none.
func shardIndex(op *ir.Op, local []int64) (func(int64) int64, error) {
	global, _ := attrInts(op, "global_shape")
	offset, _ := attrInts(op, "shard_offset")
	if len(global) == 0 && len(offset) == 0 {
		return func(i int64) int64 { return i }, nil
	}
	if len(global) != len(local) || len(offset) != len(local) {
		return nil, errf(op, "global_shape %v and shard_offset %v do not have the rank of the drawn shape %v", global, offset, local)
	}
	for d := range local {
		if offset[d] < 0 || offset[d]+local[d] > global[d] {
			return nil, errf(op, "the block of shape %v at shard_offset %v does not fit in global_shape %v", local, offset, global)
		}
	}
	return ShardIndex(global, offset, local), nil
}

// DropoutUniform is the uniform [0, 1) number dropout draws for element i
// (a linear index in the global tensor) under seed: the top 53 bits of
// splitmix64(seed·φ + i), φ = 0x9E3779B97F4A7C15. It depends on nothing
// else, so any rank holding element i draws the same number.
func DropoutUniform(seed, i int64) float64 {
	z := uint64(seed)*0x9E3779B97F4A7C15 + uint64(i)
	z += 0x9E3779B97F4A7C15
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}

// ShardIndex returns the local-to-global index map of a block of a global
// tensor of shape global whose first element sits at global index offset
// (one entry per dim) and whose shape is local.
func ShardIndex(global, offset, local []int64) func(int64) int64 {
	gs := strides(global)
	ls := strides(local)
	base := int64(0)
	for d, o := range offset {
		base += o * gs[d]
	}
	return func(i int64) int64 {
		g := base
		for d := range local {
			g += (i / ls[d]) % local[d] * gs[d]
		}
		return g
	}
}

// dropout keeps element i of X when DropoutUniform(seed, g) >=
// dropout_prob, g being i's linear index in the tensor X is a block of:
// X itself, or the tensor of shape global_shape whose block at
// shard_offset X is (shardIndex). So a rank holding a shard of X, its op
// given the global shape and its offset by partition, draws exactly its
// part of the serial mask. Out is X*mask in "downgrade_in_infer" mode (the
// default; X*(1-p) when is_test) and X*mask/(1-p) in "upscale_in_train"
// mode (X when is_test). Mask is u8. A Seed input, when given, overrides
// the seed attr.
func dropout(op *ir.Op, in Args) (Args, error) {
	x, err := one(op, in, "X")
	if err != nil {
		return nil, err
	}
	p := attrFloat(op, "dropout_prob", 0.5)
	if p < 0 || p > 1 {
		return nil, errf(op, "dropout_prob %v outside [0, 1]", p)
	}
	upscale := attrString(op, "dropout_implementation", "downgrade_in_infer") == "upscale_in_train"
	seed := attrInt(op, "seed", 0)
	if s := opt(in, "Seed"); s != nil && s.Numel() > 0 {
		seed = int64(s.Data[0])
	}
	out, mask := like(x), Zeros(ir.U8, x.Shape...)
	if attrBool(op, "is_test", false) {
		f := 1 - p
		if upscale {
			f = 1
		}
		for i, v := range x.Data {
			out.Data[i] = v * f
		}
		return Args{"Out": {out}, "Mask": {mask}}, nil
	}
	idx, err := shardIndex(op, x.Shape)
	if err != nil {
		return nil, err
	}
	f := 1.0
	if upscale {
		f = 0
		if p < 1 {
			f = 1 / (1 - p)
		}
	}
	for i, v := range x.Data {
		if DropoutUniform(seed, idx(int64(i))) >= p {
			mask.Data[i] = 1
			out.Data[i] = v * f
		}
	}
	return Args{"Out": {out}, "Mask": {mask}}, nil
}

// dropoutGrad(Mask, Out@GRAD) -> X@GRAD: the upstream grad where the mask
// kept the element, scaled by 1/(1-p) in upscale_in_train mode.
func dropoutGrad(op *ir.Op, in Args) (Args, error) {
	m, err := one(op, in, "Mask")
	if err != nil {
		return nil, err
	}
	g, err := one(op, in, "Out@GRAD")
	if err != nil {
		return nil, err
	}
	f := 1.0
	if attrString(op, "dropout_implementation", "downgrade_in_infer") == "upscale_in_train" {
		if p := attrFloat(op, "dropout_prob", 0.5); p < 1 {
			f = 1 / (1 - p)
		} else {
			f = 0
		}
	}
	dx, err := map2(op, m, g, func(mk, gv float64) float64 { return mk * gv * f })
	if err != nil {
		return nil, err
	}
	return out1("X@GRAD", dx), nil
}

// randomKernels are the kernels of this file, by op type.
func randomKernels() Kernels {
	return Kernels{
		"uniform_random": uniformRandom, "gaussian_random": gaussianRandom,
	}
}
