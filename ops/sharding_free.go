package ops

import (
	"fmt"
	"slices"
	"strings"

	"github.com/distpass/distpass/spmd"
)

// The rules of the ops that leave some args unconstrained (feed, fetch,
// the fills, control flow, the MoE counts), and of the index ops, losses
// and MoE ops that Paddle 1.x programs and the MoE example hold.

const (
	freeDoc     = "constrains no arg: what is fed, fetched or filled takes the mapping its var has, or its consumers require"
	fillDoc     = "Out unconstrained (the impl fills the local part of shape), the shape and value inputs replicated; Out replicated when its shape is a tensor (data)"
	fillLikeDoc = "Out's output_dim_idx is Input's input_dim_idx; Out's other dims replicated unless its consumers split them (Backward keeps them), Input's passed through"
	shapeDoc    = "Input unconstrained (its dims are its global shape whatever its split), Out replicated"
	controlDoc  = "constrains no arg: the ops of its sub-blocks carry the rules, and the args are theirs"
	argDoc      = "the axis replicated, the other dims passed through, dropped from Out without keepdims; everything replicated with flatten (ArgMaxInferSpmd)"
	numpyDoc    = "X and Y broadcast numpy-style (right-aligned): what is added to a split dim is split with it, size-1 dims replicated (ElementwiseBinaryInferSpmd)"
	prodDoc     = "the reduced dims replicated (a product has no partial), the others passed through to Out (ReductionInferSpmd without partial)"
	scatterDoc  = "X's and Updates' first dim and Ids replicated, their other dims shared with Out (ScatterInferSpmd, whose partial Out for split Ids is wrong for overwrite: refused here by replication); by rank-local positions, LocalIndexRule"
	ceDoc       = "the class (last) axis replicated, Label and Y 1 there, the other dims passed through (CrossEntropyWithSoftmaxInferSpmd, dynamic)"
)

// freeArgs is an einsum of which some args are free: they take no part
// in the merge and get nil (unconstrained) both ways. Its letters for a
// free arg are "".
type freeArgs struct {
	*spmd.Einsum
	in, out []bool // the free inputs and outputs
}

func (r *freeArgs) String() string {
	spell := func(axes []string, free []bool) string {
		s := make([]string, len(axes))
		for i, a := range axes {
			s[i] = a
			if free[i] {
				s[i] = "*"
			}
		}
		return strings.Join(s, ",")
	}
	return spell(r.In, r.in) + "->" + spell(r.Out, r.out)
}

func (r *freeArgs) Forward(mesh []int, in [][]int) (spmd.Sharding, error) {
	if len(in) != len(r.In) {
		return spmd.Sharding{}, fmt.Errorf("rule %s: %d input mappings for %d inputs", r, len(in), len(r.In))
	}
	given := make([][]int, len(in))
	for i, m := range in {
		if !r.in[i] {
			given[i] = m
		}
	}
	s, err := r.Einsum.Forward(mesh, given)
	if err != nil {
		return spmd.Sharding{}, err
	}
	return r.clear(s), nil
}

func (r *freeArgs) Backward(mesh []int, out [][]int) (spmd.Sharding, error) {
	if len(out) != len(r.Out) {
		return spmd.Sharding{}, fmt.Errorf("rule %s: %d output mappings for %d outputs", r, len(out), len(r.Out))
	}
	given := make([][]int, len(out))
	for i, m := range out {
		if !r.out[i] {
			given[i] = m
		}
	}
	s, err := r.Einsum.Backward(mesh, given)
	if err != nil {
		return spmd.Sharding{}, err
	}
	return r.clear(s), nil
}

// clear gives the free args nil, and their outputs no partial.
func (r *freeArgs) clear(s spmd.Sharding) spmd.Sharding {
	for i, f := range r.in {
		if f {
			s.Inputs[i] = nil
		}
	}
	for j, f := range r.out {
		if f {
			s.Outputs[j] = nil
			s.Partial[j] = nil
		}
	}
	return s
}

// freeing makes the args of the slots free (input or output slots by
// name) in e, c's op's einsum; it passes a nil e or an error through.
func (c *Infer) freeing(e *spmd.Einsum, err error, free ...string) (spmd.ShardingRule, error) {
	if e == nil || err != nil {
		return nil, err
	}
	r := &freeArgs{Einsum: e, in: make([]bool, len(e.In)), out: make([]bool, len(e.Out))}
	k := 0
	for _, s := range c.op.Inputs {
		for range s.Args {
			if k < len(e.In) && slices.Contains(free, s.Name) {
				r.in[k], e.In[k] = true, ""
			}
			k++
		}
	}
	k = 0
	for _, s := range c.op.Outputs {
		for range s.Args {
			if k < len(e.Out) && slices.Contains(free, s.Name) {
				r.out[k], e.Out[k] = true, ""
			}
			k++
		}
	}
	return r, nil
}

// freeRule constrains no arg of the op (feed, fetch, while, ...).
func freeRule(c *Infer) (spmd.ShardingRule, error) {
	var free []string
	for _, s := range c.op.Inputs {
		free = append(free, s.Name)
	}
	for _, s := range c.op.Outputs {
		free = append(free, s.Name)
	}
	e, err := c.einsum(nil, nil)
	return c.freeing(e, err, free...)
}

// fillRule is the rule of the ops that make a tensor of attr shape
// (fill_constant, uniform_random, gaussian_random, PIR's full): the
// output is free, as the impl fills the local part of its shape; the
// value and shape inputs are replicated. When the shape comes from a
// tensor, Out is replicated: the shape is data that no impl divides.
func fillRule(out string) func(c *Infer) (spmd.ShardingRule, error) {
	return func(c *Infer) (spmd.ShardingRule, error) {
		e, err := c.einsum(nil, nil)
		if c.NumIn("ShapeTensor") > 0 || c.NumIn("ShapeTensorList") > 0 {
			return e, err
		}
		return c.freeing(e, err, out)
	}
}

// fillLikeRule: fill_constant_batch_size_like's Out dim output_dim_idx is
// Input's dim input_dim_idx; Out's other dims have letters of their own
// (replicated forward, kept backward: the value is the same everywhere),
// and Input's pass through (Out is never partial: Input's values are not
// read).
func fillLikeRule(c *Infer) (spmd.ShardingRule, error) {
	x, ok := c.In("Input")
	o, oko := c.Out("Out", 0)
	if !ok || !oko {
		return nil, nil
	}
	n, no := len(x.Shape), len(o.Shape)
	in, od := c.Int("input_dim_idx"), c.Int("output_dim_idx")
	if in < 0 || in >= int64(n) || od < 0 || od >= int64(no) {
		return nil, fmt.Errorf("input_dim_idx %d or output_dim_idx %d out of range for Input of %d dims and Out of %d", in, od, n, no)
	}
	if n+no > len(alphabet) {
		return nil, fmt.Errorf("Input and Out have %d dims; the rule spells at most %d", n+no, len(alphabet))
	}
	out := []byte(alphabet[n : n+no])
	out[od] = alphabet[in]
	e, err := c.einsum(map[string]string{"Input": alphabet[:n]}, map[string]string{"Out": string(out)})
	if e != nil {
		e.NoPartial = true
	}
	return e, err
}

// shapeRule: shape's Input is free (its dims are its global ones, however
// it is split), its Out replicated.
func shapeRule(c *Infer) (spmd.ShardingRule, error) {
	e, err := c.einsum(nil, nil)
	return c.freeing(e, err, "Input")
}

// unaryOf is unaryRule with input slot x (X, PIR's in0): every output
// of x's rank is x dim for dim.
func unaryOf(x string) func(c *Infer) (spmd.ShardingRule, error) {
	return func(c *Infer) (spmd.ShardingRule, error) {
		n := c.rank(x)
		if n < 0 {
			return nil, nil
		}
		out := map[string]string{}
		for _, s := range c.op.Outputs {
			if t, ok := c.Out(s.Name, 0); ok && len(t.Shape) == n {
				out[s.Name] = alphabet[:n]
			}
		}
		return c.einsum(map[string]string{x: alphabet[:n]}, out)
	}
}

// numpyRule is the broadcast rule of the ops without an axis attr
// (logical_and, PIR's equal): inputs x and y right-aligned.
func numpyRule(x, y, out string) func(c *Infer) (spmd.ShardingRule, error) {
	return func(c *Infer) (spmd.ShardingRule, error) { return broadcastOf(c, x, y, out, -1) }
}

// argRule: Paddle's ArgMaxInferSpmdBase: the axis is replicated and
// dropped from Out (1 with keepdims); with flatten X is replicated and
// Out is one element (X's rank of 1s with keepdims).
func argRule(c *Infer) (spmd.ShardingRule, error) {
	n := c.rank("X")
	if n < 0 {
		return nil, nil
	}
	if c.Bool("flatten") || n == 0 {
		return c.einsum(nil, nil)
	}
	a, err := c.axisOf("axis", n)
	if err != nil {
		return nil, err
	}
	x := []byte(alphabet[:n])
	x[a] = '1'
	out := string(x[:a]) + string(x[a+1:])
	if c.Bool("keepdims") {
		out = string(x)
	}
	return c.einsum(map[string]string{"X": string(x)}, map[string]string{"Out": outAxes(c, "Out", out)})
}

// scatterRule: Paddle's ScatterInferSpmd: Updates' dims after the first
// are Out's; Out's first dim is replicated, and X is wanted as Out is
// (Paddle does not read X's mapping). Paddle leaves Ids and Updates' rows
// split and makes Out partial; but the X that every rank's shard is
// scattered into would be summed once per rank: here Ids and Updates'
// rows are replicated instead, and Out is never partial. scatter_grad,
// which reads no X, is spelled from Updates' rank.
func scatterRule(c *Infer) (spmd.ShardingRule, error) {
	n := c.rank("X")
	if n < 0 {
		n = c.rank("Updates")
	}
	if n < 1 {
		return nil, nil
	}
	rows := "1" + alphabet[1:n]
	e, err := c.einsum(map[string]string{"X": rows, "Updates": rows}, map[string]string{"Out": rows})
	if e == nil || err != nil || c.NumIn("X") == 0 {
		return e, err
	}
	return &likeOutput{Einsum: e, in: 0}, nil
}

// likeOutput is an einsum whose input in takes no part in the Forward
// merge and is wanted as the first output is (scatter's X).
type likeOutput struct {
	*spmd.Einsum
	in int
}

func (r *likeOutput) Forward(mesh []int, in [][]int) (spmd.Sharding, error) {
	if len(in) != len(r.In) {
		return spmd.Sharding{}, fmt.Errorf("rule %s: %d input mappings for %d inputs", r.Einsum, len(in), len(r.In))
	}
	given := slices.Clone(in)
	given[r.in] = nil
	s, err := r.Einsum.Forward(mesh, given)
	if err != nil {
		return spmd.Sharding{}, err
	}
	if in[r.in] != nil {
		s.Inputs[r.in] = slices.Clone(s.Outputs[0])
	}
	return s, nil
}

// crossEntropyRule: cross_entropy and cross_entropy2 as the dynamic
// softmax_with_cross_entropy rule: the class axis (the last) is
// replicated; Label, Y and MatchX have 1 there (or lack it: a hard Label
// of X's rank - 1), the other dims pass through, to XShape (X + [0]) too.
func crossEntropyRule(c *Infer) (spmd.ShardingRule, error) {
	n := c.rank("X")
	if n < 1 {
		return nil, nil
	}
	lead := alphabet[:n-1]
	label := lead
	switch c.rank("Label") {
	case n:
		label = lead + "1"
	case n - 1:
	default:
		return nil, nil
	}
	out := map[string]string{"Y": label}
	if c.NumOut("MatchX") > 0 {
		out["MatchX"] = lead + "1"
	}
	if t, ok := c.Out("XShape", 0); ok && len(t.Shape) == n+1 {
		// X's dims and a 0: no elements, X's mapping (as a view's XShape).
		out["XShape"] = lead + "11"
	}
	e, err := c.einsum(map[string]string{"X": lead + "1", "Label": label}, out)
	if e != nil {
		e.Strict = true
	}
	return e, err
}

const cEmbeddingDoc = "Out is Ids' dims and W's last; a split vocabulary (W's first) makes Out partial (sum), each rank giving zeros for the ids off its rows; a mesh dim on two dims is an error (CEmbeddingInferSpmd)"

// cEmbeddingRule: Paddle's CEmbeddingInferSpmd: the embedding's letters
// with the vocabulary always splittable (c_embedding looks up the rows of
// its shard, from start_index, and gives zeros for the others); the
// merge refuses a mesh dim on two dims. c_embedding_grad (a grad of its
// own) takes the forward's letters: W@GRAD is W's, partial along the
// mesh dims of Ids (as CEmbeddingGradInferSpmd gives it).
func cEmbeddingRule(c *Infer) (spmd.ShardingRule, error) {
	n, nw := c.rank("Ids"), c.rank("W")
	if n < 0 || nw != 2 {
		return nil, nil
	}
	ids := alphabet[:n]
	in := map[string]string{"W": "kn", "Ids": ids}
	out := map[string]string{"Out": ids + "n"}
	if c.NumIn("Out@GRAD") > 0 {
		in["Out@GRAD"] = ids + "n"
		out = map[string]string{"W@GRAD": "kn"}
	}
	e, err := c.einsum(in, out)
	if e != nil {
		e.Strict = true
	}
	return e, err
}
