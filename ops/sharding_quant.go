package ops

import (
	"github.com/distpass/distpass/spmd"
)

const (
	quantComputeDoc = "the scale is a max over X (per channel: over the dims but quant_axis), which a shard does not see: X and Out replicated but the channel axis, which the per-channel scales follow; the running state replicated"
	quantReadDoc    = "X to Out dim for dim (the scale is given); per-channel scales follow X's quant_axis, per-tensor ones and the state replicated"
	quantMovingDoc  = "in training the scale is a moving average of max(abs(X)), which a shard does not see: X and Out replicated; at test (is_test) the stored InScale quantises X elementwise: X to Out dim for dim; the scale and the running state replicated"
)

// quantRule is the rule of a (fake) quantisation op. An op that computes
// its scale from X (abs_max, moving average, quantize_linear when it
// writes OutScale outside a test) sees only its shard's max when X is
// split: X is replicated but its channel axis (per-channel ops), which
// the scales share. An op that reads its scale (the dequantisers,
// quantize_linear at test) is elementwise given the scale: X passes
// through, and per-channel scale inputs follow X's channel axis.
// perChannel is the scale's axis attr ("" for a per-tensor op; for
// quantize_linear quant_axis -1 is per tensor); scales lists the input
// and output slots that hold one scale per channel.
func quantRule(perChannel string, computes func(c *Infer) bool, scales ...string) func(c *Infer) (spmd.ShardingRule, error) {
	return func(c *Infer) (spmd.ShardingRule, error) {
		n := c.rank("X")
		if n < 0 {
			return nil, nil
		}
		axis := -1
		if perChannel != "" && c.Int(perChannel) >= 0 {
			a, err := c.axisOf(perChannel, n)
			if err != nil {
				return nil, err
			}
			axis = a
		}
		x := []byte(alphabet[:n])
		if computes(c) {
			for i := range x {
				if i != axis {
					x[i] = '1'
				}
			}
		}
		in, out := map[string]string{"X": string(x)}, map[string]string{"Out": string(x), "Y": string(x)}
		if axis >= 0 {
			for _, s := range scales {
				if t, ok := c.In(s); ok && len(t.Shape) == 1 {
					in[s] = string(x[axis])
				}
				if t, ok := c.Out(s, 0); ok && len(t.Shape) == 1 {
					out[s] = string(x[axis])
				}
			}
		}
		e, err := c.einsum(in, out)
		if e != nil {
			// A scale lacks X's other dims but is no sum of parts.
			e.NoPartial = true
		}
		return e, err
	}
}

// always and never say whether a quantisation op computes its scale.
func always(*Infer) bool { return true }
func never(*Infer) bool  { return false }

// notTest: the moving-average ops compute their scale from X in
// training; at test (is_test) they quantise by the stored InScale and
// leave the running state as it is, elementwise (Paddle's
// FakeQuantOrWithDequantMovingAverageAbsMaxKernel and
// MovingAverageAbsMaxScaleKernel return before the update).
func notTest(c *Infer) bool { return !c.Bool("is_test") }

// linearComputes: quantize_linear computes its scale (a moving average
// of max(abs(X))) when it writes OutScale and is not at test.
func linearComputes(c *Infer) bool {
	return c.Op().Type == "quantize_linear" && c.NumOut("OutScale") > 0 && !c.Bool("is_test")
}

// channelDequantRule: fake_channel_wise_dequantize_max_abs's first scale
// is per channel along quant_axis (dim 1 with two scales), its second
// one value.
func channelDequantRule(c *Infer) (spmd.ShardingRule, error) {
	n := c.rank("X")
	if n < 0 {
		return nil, nil
	}
	a := 1
	if c.NumIn("Scales") == 1 {
		var err error
		if a, err = c.axisOf("quant_axis", n); err != nil {
			return nil, err
		}
	}
	if a >= n {
		return nil, nil
	}
	x := alphabet[:n]
	e, err := c.einsum(map[string]string{"X": x}, map[string]string{"Out": x})
	if e == nil || err != nil {
		return e, err
	}
	k := 0
	for _, s := range c.op.Inputs {
		for i := range s.Args {
			if s.Name == "Scales" && i == 0 && len(e.In[k]) == 1 {
				e.In[k] = x[a : a+1]
			}
			k++
		}
	}
	return e, nil
}
