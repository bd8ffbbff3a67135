package ops

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/spmd"
)

// The rule builders of the defs: each reads the op's input types and
// attrs through Infer and spells Paddle's phi SPMD rule for the op as an
// spmd.Einsum, with letters in the order of the op's own slots.

// The rules' why, for `distpass ops` beside the rule as it prints
// itself (Def.Rule): the Paddle rule each follows, and what the printed
// notation does not say (the attrs it was not printed for, why a dim is
// whole).
const (
	unaryDoc     = "Paddle's ElementwiseUnaryInferSpmd"
	broadcastDoc = "X and Y broadcast: what is added to a split dim is split with it, size-1 dims replicated (ElementwiseBinaryInferSpmd, with the static axis)"
	matmulDoc    = "Paddle's MatmulInferSpmd: batch dims right-aligned, a size-1 one replicated; a 1-D operand has k alone; a transpose swaps an operand's last two dims"
	mulDoc       = "X [M.., k] and Y [k, N..] give Out [M.., N..]; a split k makes Out partial (sum); a k of several dims is replicated"
	softmaxDoc   = "Paddle's SoftmaxInferSpmd: the dim of attr axis (A) kept whole"
	transposeDoc = "Out's dims are X's, permuted (TransposeInferSpmd)"
	reduceDoc    = "Out lacks the reduced dims (1 with keep_dim); their mesh dims make Out partial with the op's reduction (ReductionInferSpmd)"
	layerNormDoc = "the dims before begin_norm_axis kept in Y, Mean and Variance; the normalised dims, Scale and Bias replicated (LayerNormInferSpmd)"
	embeddingDoc = "Paddle's EmbeddingInferSpmd: a split vocabulary (k) gives zeros for the ids off a rank's rows; with padding_idx or is_sparse it is kept whole"
)

// alphabet is the letters rules draw dims from, in order; matmul's m, k
// and n are taken out of it (Paddle reserves them the same way).
const alphabet = "abcdefghijlopqrstuvwxyz"

// einsum spells a rule from letters by slot: each arg of a slot in in
// or out gets the slot's letters (all its args the same); an arg of any
// other slot is not sharded ('1' for each of its dims).
func (c *Infer) einsum(in, out map[string]string) (*spmd.Einsum, error) {
	e := &spmd.Einsum{}
	k := 0
	for _, s := range c.op.Inputs {
		for range s.Args {
			l, ok := in[s.Name]
			if !ok {
				l = ones(c.ins, k)
			}
			if k < len(c.ins) && c.ins[k] != nil && c.ins[k].Type.IsTensor() && len(c.ins[k].Type.Shape) != len(l) {
				return nil, fmt.Errorf("%s %s has %d dims; the rule spells %q", s.Name, c.ins[k].Name(), len(c.ins[k].Type.Shape), l)
			}
			e.In = append(e.In, l)
			k++
		}
	}
	k = 0
	for _, s := range c.op.Outputs {
		for range s.Args {
			l, ok := out[s.Name]
			if !ok {
				l = ones(c.outs, k)
			}
			e.Out = append(e.Out, l)
			e.Whole = append(e.Whole, !ok)
			k++
		}
	}
	return e, nil
}

// Einsum spells a rule by slot, as the rule builders do, for a def made
// outside the table (a custom op's): each arg of a slot named in in or
// out gets the slot's letters, an arg of any other slot is never split;
// a letter only inputs have is reduced by r.
func (c *Infer) Einsum(in, out map[string]string, r ir.Reduce) (*spmd.Einsum, error) {
	e, err := c.einsum(in, out)
	if err != nil {
		return nil, err
	}
	e.Reduce = r
	return e, nil
}

// ones is '1' for each dim of vars[k] (none for a var that is not a
// dense tensor).
func ones(vars []*ir.Var, k int) string {
	if k >= len(vars) || vars[k] == nil || !vars[k].Type.IsTensor() {
		return ""
	}
	return strings.Repeat("1", len(vars[k].Type.Shape))
}

// rank returns the rank of input slot's first arg, or -1.
func (c *Infer) rank(slot string) int {
	t, ok := c.In(slot)
	if !ok {
		return -1
	}
	return len(t.Shape)
}

// unaryRule: Out (and every other output of X's shape, dropout's Mask)
// is X dim for dim (Paddle's ElementwiseUnaryInferSpmd).
func unaryRule(c *Infer) (spmd.ShardingRule, error) { return unaryOf("X")(c) }

// broadcastRule: Paddle's ElementwiseBinaryInferSpmd, with the static
// ops' axis: X and Y right-aligned (or Y at axis), a size-1 dim '1', Out
// '1' only where every input is.
func broadcastRule(c *Infer) (spmd.ShardingRule, error) {
	return broadcastOf(c, "X", "Y", "Out", int(c.Int("axis")))
}

// broadcastOf is broadcastRule over input slots xslot and yslot and
// output slot outslot, with the static axis (-1: right-aligned).
func broadcastOf(c *Infer, xslot, yslot, outslot string, axis int) (spmd.ShardingRule, error) {
	x, okx := c.In(xslot)
	y, oky := c.In(yslot)
	if !okx || !oky {
		return nil, nil
	}
	n := max(len(x.Shape), len(y.Shape))
	if axis < 0 || len(x.Shape) == len(y.Shape) {
		axis = n - min(len(x.Shape), len(y.Shape))
	}
	spell := func(shape []int64, off int) string {
		b := []byte(alphabet[off : off+len(shape)])
		for i, d := range shape {
			if d == 1 {
				b[i] = '1'
			}
		}
		return string(b)
	}
	xo, yo := 0, 0
	if len(x.Shape) < n {
		xo = axis
	} else if len(y.Shape) < n {
		yo = axis
	}
	if xo+len(x.Shape) > n || yo+len(y.Shape) > n {
		return nil, fmt.Errorf("axis %d leaves no room for the shorter operand", axis)
	}
	xs, ys := spell(x.Shape, xo), spell(y.Shape, yo)
	out := []byte(alphabet[:n])
	for i := range out {
		xi, yi := i-xo, i-yo
		xb := xi < 0 || xi >= len(xs) || xs[xi] == '1'
		yb := yi < 0 || yi >= len(ys) || ys[yi] == '1'
		if xb && yb {
			out[i] = '1'
		}
	}
	return c.einsum(map[string]string{xslot: xs, yslot: ys}, map[string]string{outslot: string(out)})
}

// matmulRule: Paddle's MatmulInferSpmd: X [..., m, k] and Y [..., k, n]
// (their last two dims swapped when transposed), batch dims right-aligned
// and shared; a 1-D operand has k alone. Out is partial along k's mesh
// dim.
func matmulRule(transX, transY string) func(c *Infer) (spmd.ShardingRule, error) {
	return func(c *Infer) (spmd.ShardingRule, error) {
		nx, ny := c.rank("X"), c.rank("Y")
		if nx < 1 || ny < 1 {
			return nil, nil
		}
		nb := max(nx, ny) - 2
		batch := func(n int) string {
			if n <= 2 {
				return ""
			}
			return alphabet[nb-(n-2) : nb]
		}
		var xs, ys, out string
		switch {
		case nx == 1 && ny == 1:
			xs, ys, out = "k", "k", ""
		case nx == 1:
			xs, ys, out = "k", batch(ny)+"kn", batch(ny)+"n"
		case ny == 1:
			xs, ys, out = batch(nx)+"mk", "k", batch(nx)+"m"
		default:
			xs, ys, out = batch(nx)+"mk", batch(ny)+"kn", batch(max(nx, ny))+"mn"
		}
		if nx >= 2 && c.Bool(transX) {
			xs = xs[:nx-2] + string(xs[nx-1]) + string(xs[nx-2])
		}
		if ny >= 2 && c.Bool(transY) {
			ys = ys[:ny-2] + string(ys[ny-1]) + string(ys[ny-2])
		}
		// Broadcast size-1 batch dims are not sharded.
		xs, ys = unitOnes(c, "X", xs), unitOnes(c, "Y", ys)
		e, err := c.einsum(map[string]string{"X": xs, "Y": ys}, map[string]string{"Out": out})
		if e != nil {
			e.StrictBackward = true
		}
		return e, err
	}
}

// unitOnes replaces the letters of slot's size-1 batch dims (all but the
// last two) by '1'.
func unitOnes(c *Infer, slot, axes string) string {
	t, ok := c.In(slot)
	if !ok || len(t.Shape) != len(axes) || len(axes) < 3 {
		return axes
	}
	b := []byte(axes)
	for i := range len(axes) - 2 {
		if t.Shape[i] == 1 {
			b[i] = '1'
		}
	}
	return string(b)
}

// mulRule: mul's X [M..., K] times Y [K, N...] at x_num_col_dims and
// y_num_col_dims; a contraction over several dims of either side is
// not sharded (the flattening would interleave shards).
func mulRule(c *Infer) (spmd.ShardingRule, error) {
	nx, ny := c.rank("X"), c.rank("Y")
	xn, yn := int(c.Int("x_num_col_dims")), int(c.Int("y_num_col_dims"))
	if nx < 2 || ny < 2 || xn < 1 || xn >= nx || yn < 1 || yn >= ny {
		return nil, nil
	}
	k := "k"
	if nx-xn != 1 || yn != 1 {
		k = "1"
	}
	m := alphabet[:xn]
	n := alphabet[xn : xn+ny-yn]
	xs := m + k + strings.Repeat("1", nx-xn-1)
	ys := strings.Repeat("1", yn-1) + k + n
	if k == "1" {
		xs, ys = m+strings.Repeat("1", nx-xn), strings.Repeat("1", yn)+n
	}
	return c.einsum(map[string]string{"X": xs, "Y": ys}, map[string]string{"Out": m + n})
}

// softmaxRule: Paddle's SoftmaxInferSpmd: the axis is never sharded, and
// a mesh dim on two dims is an error.
func softmaxRule(c *Infer) (spmd.ShardingRule, error) {
	n := c.rank("X")
	if n < 0 {
		return nil, nil
	}
	b := []byte(alphabet[:n])
	if n > 0 {
		a := int(c.Int("axis"))
		if a < 0 {
			a += n
		}
		if a < 0 || a >= n {
			return nil, fmt.Errorf("axis %d out of range for %d dims", c.Int("axis"), n)
		}
		b[a] = '1'
	}
	e, err := c.einsum(map[string]string{"X": string(b)}, map[string]string{"Out": string(b)})
	if e != nil {
		e.Strict = true
	}
	return e, err
}

// transposeRule: Out's dim i is X's dim axis[i] (Paddle's
// TransposeInferSpmd); XShape is not sharded.
func transposeRule(c *Infer) (spmd.ShardingRule, error) {
	n := c.rank("X")
	perm, ok := c.Ints("axis")
	if n < 0 || !ok || len(perm) != n {
		return nil, nil
	}
	x := alphabet[:n]
	out := make([]byte, n)
	for i, p := range perm {
		if p < 0 {
			p += int64(n)
		}
		if p < 0 || p >= int64(n) {
			return nil, fmt.Errorf("axis %v is not a permutation of %d dims", perm, n)
		}
		out[i] = x[p]
	}
	// XShape is [0] + X's dims, split as X (Paddle's dist_transpose).
	return c.einsum(map[string]string{"X": x}, map[string]string{"Out": string(out), "XShape": "1" + x})
}

// reduceRule: Paddle's ReductionInferSpmdBase: Out lacks the reduced
// dims ('1' with keep_dim), and is partial along their mesh dims with
// the op's reduction.
func reduceRule(r ir.Reduce) func(c *Infer) (spmd.ShardingRule, error) { return reduceRuleOf(r, false) }

// reduceRuleOf is reduceRule; with replicate, the reduced dims are
// replicated in X instead, and Out is never partial (reduce_prod: no
// partial multiplies).
func reduceRuleOf(r ir.Reduce, replicate bool) func(c *Infer) (spmd.ShardingRule, error) {
	return func(c *Infer) (spmd.ShardingRule, error) {
		n := c.rank("X")
		if n < 0 {
			return nil, nil
		}
		dims, _ := c.Ints("dim")
		all := c.Bool("reduce_all") || len(dims) == 0 || c.op.Type == "mean"
		reduced := make([]bool, n)
		for _, d := range dims {
			if d < 0 {
				d += int64(n)
			}
			if d >= 0 && d < int64(n) {
				reduced[d] = true
			}
		}
		x := []byte(alphabet[:n])
		var out []byte
		for i := range n {
			switch {
			case !all && !reduced[i]:
				out = append(out, x[i])
				continue
			case c.Bool("keep_dim"):
				out = append(out, '1')
			}
			if replicate {
				x[i] = '1'
			}
		}
		e, err := c.einsum(map[string]string{"X": string(x)}, map[string]string{"Out": outAxes(c, "Out", string(out))})
		if e != nil {
			e.Reduce = r
		}
		return e, err
	}
}

// outAxes fits axes to the declared rank of output slot: a scalar
// declared [1] gets "1".
func outAxes(c *Infer, slot, axes string) string {
	if t, ok := c.Out(slot, 0); ok && len(t.Shape) != len(axes) && axes == "" && len(t.Shape) == 1 {
		return "1"
	}
	return axes
}

// layerNormRule: Paddle's LayerNormInferSpmd: the dims before
// begin_norm_axis keep their sharding; the normalised dims, Scale and
// Bias are not sharded; Mean and Variance take the leading dims. In
// programs before Paddle 3 the statistics are the leading dims'
// flattened product, of which a rank's block is contiguous only when
// the first leading dim alone is split: the others are then replicated,
// as a reshape's flatten keeps only its first dim's sharding.
func layerNormRule(c *Infer) (spmd.ShardingRule, error) {
	n := c.rank("X")
	b := int(c.Int("begin_norm_axis"))
	if n < 1 || b < 1 || b > n {
		return nil, nil
	}
	lead := alphabet[:b]
	flat := false
	for _, s := range []string{"Mean", "Variance"} {
		if t, ok := c.Out(s, 0); ok && len(t.Shape) == 1 && b > 1 {
			flat = true
		}
	}
	if flat {
		lead = lead[:1] + strings.Repeat("1", b-1)
	}
	x := lead + strings.Repeat("1", n-b)
	out := map[string]string{"Y": x}
	for _, s := range []string{"Mean", "Variance"} {
		switch t, ok := c.Out(s, 0); {
		case ok && flat && len(t.Shape) == 1:
			out[s] = lead[:1]
		case ok && len(t.Shape) == b:
			out[s] = lead
		}
	}
	return c.einsum(map[string]string{"X": x}, out)
}

// embeddingRule: Paddle's EmbeddingInferSpmd: Out is Ids' dims and W's
// last; a vocabulary (W's first) dim that is sharded makes Out partial
// (each rank looks up its rows, zeros for the others). With padding_idx
// or is_sparse, the vocabulary is not sharded: where Paddle refuses, the
// rule requires W replicated on it.
func embeddingRule(c *Infer) (spmd.ShardingRule, error) {
	n, nw := c.rank("Ids"), c.rank("W")
	if n < 0 || nw != 2 {
		return nil, nil
	}
	ids, out := alphabet[:n], alphabet[:n]
	if c.op.Type == "lookup_table" {
		// Paddle 1.x's Ids end in a dim of 1, which Out replaces.
		if n < 1 {
			return nil, nil
		}
		ids, out = alphabet[:n-1]+"1", alphabet[:n-1]
	}
	vocab := "k"
	if c.Int("padding_idx") != -1 || c.Bool("is_sparse") {
		vocab = "1"
	}
	e, err := c.einsum(map[string]string{"Ids": ids, "W": vocab + "n"}, map[string]string{"Out": out + "n"})
	if e != nil {
		e.Strict = true
	}
	return e, err
}

// axisOf returns attr name as a dim of an n-dim tensor, negative counted
// from the end.
func (c *Infer) axisOf(name string, n int) (int, error) {
	a := int(c.Int(name))
	if a < 0 {
		a += n
	}
	if a < 0 || a >= n {
		return 0, fmt.Errorf("%s %d out of range for %d dims", name, c.Int(name), n)
	}
	return a, nil
}

// alongAxisRule: the dim attr axis names is never sharded, every other
// dim passes through, from every input of slot in to every output of
// the slots of outs (split, concat, cumsum, top_k_v2: Paddle's rules
// replicate the axis they cut, join, scan or sort along). Several inputs
// (concat's) that disagree are aligned by cost, as Paddle's ConcatInferSpmd
// does with AlignDimsSharding, where a merge would refuse or keep the
// first input's choice.
func alongAxisRule(slot string, outs ...string) func(c *Infer) (spmd.ShardingRule, error) {
	return func(c *Infer) (spmd.ShardingRule, error) {
		n := c.rank(slot)
		if n < 0 || c.NumIn("AxisTensor") > 0 {
			return nil, nil // the axis is data
		}
		b := []byte(alphabet[:n])
		if n > 0 {
			a, err := c.axisOf("axis", n)
			if err != nil {
				return nil, err
			}
			b[a] = '1'
		}
		out := map[string]string{}
		for _, s := range outs {
			out[s] = string(b)
		}
		e, err := c.einsum(map[string]string{slot: string(b)}, out)
		if err == nil && c.op.Type == "split" && n > 0 {
			// Paddle's split reverse merges the split axis too.
			back, err := c.einsum(map[string]string{slot: alphabet[:n]}, map[string]string{"Out": alphabet[:n]})
			if err != nil {
				return nil, err
			}
			return &splitRule{Einsum: e, back: back, axis: bytes.IndexByte(b, '1')}, nil
		}
		if err != nil || c.NumIn(slot) < 2 {
			return e, err
		}
		r := &alignRule{Einsum: e, axis: bytes.IndexByte(b, '1')}
		k := 0
		for _, s := range c.op.Inputs {
			for range s.Args {
				if s.Name == slot {
					v := c.ins[k]
					if v == nil || !v.Type.IsTensor() {
						return nil, nil
					}
					r.args, r.shapes = append(r.args, k), append(r.shapes, v.Type.Shape)
				}
				k++
			}
		}
		return r, nil
	}
}

// sumRule: sum's X, all of one shape, and Out share every dim.
func sumRule(c *Infer) (spmd.ShardingRule, error) {
	n := c.rank("X")
	if n < 0 {
		return nil, nil
	}
	return c.einsum(map[string]string{"X": alphabet[:n]}, map[string]string{"Out": alphabet[:n]})
}

// sliceRule: Paddle's SliceInferSpmd: the sliced axes are not sharded,
// the others pass through; a decreased axis is dropped from Out.
func sliceRule(c *Infer) (spmd.ShardingRule, error) {
	n := c.rank("Input")
	if n < 0 {
		return nil, nil
	}
	axes, _ := c.Ints("axes")
	dec, _ := c.Ints("decrease_axis")
	b := []byte(alphabet[:n])
	for _, a := range axes {
		if a < 0 {
			a += int64(n)
		}
		if a >= 0 && a < int64(n) {
			b[a] = '1'
		}
	}
	var out []byte
	for i := range n {
		if !slicesContains(dec, int64(i)) {
			out = append(out, b[i])
		}
	}
	return c.einsum(map[string]string{"Input": string(b)}, map[string]string{"Out": outAxes(c, "Out", string(out))})
}

func slicesContains(xs []int64, x int64) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// gatherRule: Paddle's GatherInferSpmd: X's gather axis is not sharded;
// Out has X's dims with Index's in place of the axis (none for a 0-d
// Index). Where X and Index are sharded on one mesh dim, Out keeps X's
// as Paddle's does, and Index is wanted replicated: Paddle wants it as
// given, which contradicts Out (Index [0] with Out [0, -1, -1]).
func gatherRule(c *Infer) (spmd.ShardingRule, error) {
	n, ni := c.rank("X"), c.rank("Index")
	if n < 1 || ni < 0 || ni > 1 || len(c.op.Input("Axis")) > 0 {
		return nil, nil
	}
	a, err := c.axisOf("axis", n)
	if err != nil {
		return nil, err
	}
	x := []byte(alphabet[:n])
	x[a] = '1'
	idx := ""
	if ni == 1 {
		idx = "k"
	}
	out := string(x[:a]) + idx + string(x[a+1:])
	return c.einsum(map[string]string{"X": string(x), "Index": idx}, map[string]string{"Out": out})
}

// softmaxXentRule: Paddle's CrossEntropyWithSoftmaxInferSpmd as its
// dynamic variant: the class axis is not sharded (a sharded one needs
// the fused c_softmax_with_cross_entropy, which an impl chooses); Label
// and Loss have 1 there, the other dims pass through.
func softmaxXentRule(c *Infer) (spmd.ShardingRule, error) {
	n := c.rank("Logits")
	if n < 1 {
		return nil, nil
	}
	a, err := c.axisOf("axis", n)
	if err != nil {
		return nil, err
	}
	x := []byte(alphabet[:n])
	x[a] = '1'
	label := string(x)
	if c.rank("Label") != n {
		return nil, nil
	}
	e, err := c.einsum(map[string]string{"Logits": string(x), "Label": label},
		map[string]string{"Softmax": string(x), "Loss": string(x)})
	if e != nil {
		e.Strict = true
	}
	return e, err
}

const (
	alongAxisDoc = "the dim of attr axis replicated, the others passed through; concat's inputs that disagree aligned by cost (Paddle's split, concat, cumsum, top_k rules)"
	sumDoc       = "Paddle's AddNInferSpmd"
	sliceDoc     = "the sliced axes replicated, the others passed through, decrease_axis dropped (SliceInferSpmd)"
	gatherDoc    = "X's axis replicated; Out has X's dims with Index's at the axis (GatherInferSpmd); by rank-local positions, LocalIndexRule"
	xentDoc      = "the class axis replicated, Label and Loss 1 there, the other dims passed through (CrossEntropyWithSoftmaxInferSpmd, dynamic)"
)

// cumsumRule: along its axis, or, flattened, over X whole: not sharded.
func cumsumRule(c *Infer) (spmd.ShardingRule, error) {
	if c.Bool("flatten") {
		return c.einsum(nil, nil)
	}
	return alongAxisRule("X", "Out")(c)
}

const (
	convDoc      = "the batch passes through; with groups 1, Input's channels and Filter's second dim are one dim (split: Output partial, sum) and Filter's first gives Output's channels; the spatial dims replicated (Conv2dInferSpmd, which passes them through and would need a halo exchange)"
	poolDoc      = "batch and channels pass through; the spatial dims replicated"
	batchNormDoc = "the batch passes through to Y (local batch statistics, Paddle's default); the channels split X, Y and every per-channel tensor alike; the spatial dims replicated"
	channelDoc   = "every dim of X passes through to Out; Scale and Bias split as X's channels"
)

// channelLast reports whether the op's layout attr (data_format or
// data_layout) puts the channels last.
func (c *Infer) channelLast(attr string) bool {
	s := c.String(attr)
	return s == "NHWC" || s == "NDHWC" || s == "NLC"
}

// convRule: Paddle's Conv2dInferSpmd letters (Input nchw, Filter mcij,
// Output nmhw), with the spatial dims replicated: a split height would
// need the rows of the neighbouring shards (a halo), which no impl
// exchanges. With groups > 1 the channels are replicated too: Filter's
// second dim is a group's channels, not Input's.
func convRule(c *Infer) (spmd.ShardingRule, error) {
	if c.rank("Input") != 4 || c.rank("Filter") != 4 {
		return nil, nil
	}
	ch := "c"
	if c.Int("groups") != 1 {
		ch = "1"
	}
	in, filter, out := "n"+ch+"11", "m"+ch+"11", "nm11"
	if c.channelLast("data_format") {
		in, out = "n11"+ch, "n11m"
	}
	bias := map[string]string{"Input": in, "Filter": filter}
	if c.NumIn("Bias") > 0 && c.rank("Bias") == 1 {
		bias["Bias"] = "m"
	}
	if c.NumIn("ResidualData") > 0 {
		bias["ResidualData"] = out
	}
	return c.einsum(bias, map[string]string{"Output": out})
}

// poolRule: a pool reduces each channel's window alone: the batch and
// channels pass through, the spatial dims are replicated.
func poolRule(c *Infer) (spmd.ShardingRule, error) {
	if c.rank("X") != 4 {
		return nil, nil
	}
	x := "nc11"
	if c.channelLast("data_format") {
		x = "n11c"
	}
	return c.einsum(map[string]string{"X": x}, map[string]string{"Out": x})
}

// batchNormRule: the batch dim of X and Y passes through (each shard
// normalises by its own batch's statistics, as Paddle's data-parallel
// batch norm does by default); the channels split X, Y and every
// per-channel tensor alike.
func batchNormRule(c *Infer) (spmd.ShardingRule, error) {
	n := c.rank("X")
	if n < 2 {
		return nil, nil
	}
	x := []byte("n" + strings.Repeat("1", n-1))
	if c.channelLast("data_layout") {
		x[n-1] = 'c'
	} else {
		x[1] = 'c'
	}
	in := map[string]string{"X": string(x)}
	out := map[string]string{"Y": string(x)}
	for _, s := range []string{"Scale", "Bias", "Mean", "Variance"} {
		in[s] = "c"
	}
	for _, s := range []string{"MeanOut", "VarianceOut", "SavedMean", "SavedVariance"} {
		out[s] = "c"
	}
	e, err := c.einsum(in, out)
	if e != nil {
		// The statistics lack the batch, but are not partial: each
		// shard's are its own batch's (a variance is no sum of parts).
		e.NoPartial = true
	}
	return e, err
}

// affineChannelRule: X's dims pass through; Scale and Bias split as its
// channels (first after the batch, or last).
func affineChannelRule(c *Infer) (spmd.ShardingRule, error) {
	n := c.rank("X")
	if n < 2 {
		return nil, nil
	}
	x := alphabet[:n]
	ch := x[1:2]
	if s := c.String("data_layout"); s == "NHWC" || s == "AnyLayout" {
		ch = x[n-1:]
	}
	return c.einsum(map[string]string{"X": x, "Scale": ch, "Bias": ch}, map[string]string{"Out": x})
}

const optimizerDoc = "Paddle's optimizer rules: an update is elementwise over Param, every arg of its shape shares its dims; the one-element args are whole"

// optimizerRule: an update is elementwise over Param: every arg of
// Param's rank (Grad, Velocity, Moment1, ParamOut, ...) takes Param's
// letters; the one-element args (LearningRate, Beta1Pow) are not split.
func optimizerRule(c *Infer) (spmd.ShardingRule, error) {
	n := c.rank("Param")
	if n < 0 {
		return nil, nil
	}
	p := alphabet[:n]
	in, out := map[string]string{}, map[string]string{}
	for _, s := range c.op.Inputs {
		if t, ok := c.In(s.Name); ok && len(t.Shape) == n && len(s.Args) == 1 && prod(t.Shape) != 1 {
			in[s.Name] = p
		}
	}
	for _, s := range c.op.Outputs {
		if t, ok := c.Out(s.Name, 0); ok && len(t.Shape) == n && len(s.Args) == 1 && prod(t.Shape) != 1 {
			out[s.Name] = p
		}
	}
	in["Param"] = p
	return c.einsum(in, out)
}

const viewDoc = "X's dims regrouped into Out's: a split dim stays split where it is the first of a merge or the first piece of a split and its mesh dim divides that piece; XShape replicated (Paddle's ReshapeInferSpmd, and its squeeze, unsqueeze and flatten rules)"

// viewRule is the rule of the ops that regroup X's elements into Out's
// shape (reshape2, squeeze2, unsqueeze2, flatten_contiguous_range):
// spmd.ReshapeSharding between X's and Out's shapes.
func viewRule(c *Infer) (spmd.ShardingRule, error) { return newView(c, "X", "Out", "XShape", "") }

// newView builds the reshape rule from input slot from to output slot
// to; the args of output slot xshape get -1 and from's wanted mapping,
// those of input slot xshapeIn (a view grad's XShape) -1 and to's.
func newView(c *Infer, from, to, xshape, xshapeIn string) (spmd.ShardingRule, error) {
	x, okx := c.In(from)
	out, oko := c.Out(to, 0)
	if !okx || !oko {
		return nil, nil
	}
	r := &view{in: x.Shape, out: out.Shape, x: -1, out0: -1, ranks: inputRanks(c)}
	for _, s := range c.op.Inputs {
		if s.Name == from && r.x < 0 && len(s.Args) > 0 {
			r.x = r.nin
		}
		if s.Name == xshapeIn {
			for k := range s.Args {
				r.xshapeIn = append(r.xshapeIn, r.nin+k)
			}
		}
		// A grad without XShape reads X for its shape: X must then be
		// laid out as X@GRAD, whose local shape the kernel takes from it.
		if xshapeIn != "" && s.Name == "X" {
			for k := range s.Args {
				r.likeOut = append(r.likeOut, r.nin+k)
			}
		}
		r.nin += len(s.Args)
	}
	for _, s := range c.op.Outputs {
		for range s.Args {
			switch {
			case s.Name == to && r.out0 < 0:
				r.out0 = r.nout
			case s.Name == xshape:
				r.xshape = append(r.xshape, r.nout)
			}
			r.nout++
		}
	}
	return r, nil
}

// view is viewRule's rule: arg x of the inputs and out0 of the outputs
// are regrouped; XShape's args get -1 and X's wanted mapping (in a grad,
// where XShape is an input, -1 and X@GRAD's; an X it reads instead gets
// X@GRAD's); every other arg is not split.
type view struct {
	in, out   []int64
	x, out0   int
	xshape    []int
	xshapeIn  []int
	likeOut   []int // inputs laid out as out0 (a view grad's X)
	nin, nout int
	ranks     []int // each input's rank, -1 for one that is no dense tensor
}

// inputRanks returns the rank of each input arg of c's op, -1 for one
// that is not a dense tensor.
func inputRanks(c *Infer) []int {
	rs := make([]int, len(c.ins))
	for i, v := range c.ins {
		rs[i] = -1
		if v != nil && v.Type.IsTensor() {
			rs[i] = len(v.Type.Shape)
		}
	}
	return rs
}

func (r *view) String() string {
	return "reshape " + ir.FormatShape(r.in) + " -> " + ir.FormatShape(r.out)
}

func (r *view) Forward(mesh []int, in [][]int) (spmd.Sharding, error) {
	if len(in) != r.nin || in[r.x] == nil {
		return spmd.Sharding{}, fmt.Errorf("rule %s: want X's mapping among %d inputs", r, r.nin)
	}
	want, out, err := spmd.ReshapeSharding(r.in, in[r.x], r.out, mesh)
	if err != nil {
		return spmd.Sharding{}, err
	}
	return r.sharding(in, want, out), nil
}

func (r *view) Backward(mesh []int, out [][]int) (spmd.Sharding, error) {
	if len(out) != r.nout || out[r.out0] == nil {
		return spmd.Sharding{}, fmt.Errorf("rule %s: want Out's mapping among %d outputs", r, r.nout)
	}
	want, wantOut, err := spmd.ReshapeShardingReverse(r.in, r.out, out[r.out0], mesh)
	if err != nil {
		return spmd.Sharding{}, err
	}
	return r.sharding(nil, want, wantOut), nil
}

// sharding spells the result for every arg: X's wanted mapping and Out's,
// XShape [-1] + X's (an XShape input [-1] + Out's), the other inputs
// replicated (nil when given nil).
func (r *view) sharding(in [][]int, x, out []int) spmd.Sharding {
	s := spmd.Sharding{Inputs: make([][]int, r.nin), Outputs: make([][]int, r.nout), Partial: make([][]ir.Partial, r.nout)}
	for i := range s.Inputs {
		switch {
		case i == r.x:
			s.Inputs[i] = x
		case in != nil && in[i] == nil:
		case i < len(r.ranks) && r.ranks[i] >= 0:
			s.Inputs[i] = replicatedLike(make([]int, r.ranks[i]))
		}
	}
	s.Outputs[r.out0] = out
	for _, k := range r.xshapeIn {
		s.Inputs[k] = append([]int{-1}, out...)
	}
	for _, k := range r.likeOut {
		s.Inputs[k] = slices.Clone(out)
	}
	for _, k := range r.xshape {
		s.Outputs[k] = append([]int{-1}, x...)
	}
	return s
}

func replicatedLike(m []int) []int {
	r := make([]int, len(m))
	for i := range r {
		r[i] = -1
	}
	return r
}

const gradShardingDoc = "the forward rule's letters: each X@GRAD has X's, each output gradient its output's; a letter an X@GRAD lacks makes it partial (sum): a weight's grad under data parallelism, an activation's grad under a split contraction"

// gradSharding is the rule of a grad op derived from its forward def's
// Grad: the forward op's rule is built on the forward slots the grad op
// reads (an output gradient standing for its output: they have one
// shape), and its letters are given to the grad op's args. The forward
// rule must be an spmd.Einsum; other rules (reshape's) give none.
func gradSharding(c *Infer) (spmd.ShardingRule, error) {
	fwd := c.def.of
	vars := map[string]*ir.Var{}
	k := 0
	for _, s := range c.op.Inputs {
		for _, a := range s.Args {
			if k < len(c.ins) {
				vars[a] = c.ins[k]
			}
			k++
		}
	}
	k = 0
	for _, s := range c.op.Outputs {
		for _, a := range s.Args {
			if k < len(c.outs) && vars[a] == nil {
				vars[a] = c.outs[k]
			}
			k++
		}
	}
	// The forward op: each input slot from the slot itself when the grad
	// op reads it, else from its gradient (relu_grad reads Out, not X:
	// X@GRAD has X's shape); each output slot likewise.
	f := &ir.Op{ID: c.op.ID, Type: fwd.Type, Attrs: c.op.Attrs}
	for _, s := range fwd.Inputs {
		args := c.op.Input(s.Name)
		if len(args) == 0 {
			args = c.op.Output(s.Name + "@GRAD")
		}
		if len(args) > 0 {
			f.Inputs = append(f.Inputs, ir.S(s.Name, args...))
		}
	}
	for _, s := range fwd.Outputs {
		args := c.op.Input(s.Name)
		if len(args) == 0 {
			args = c.op.Input(s.Name + "@GRAD")
		}
		if len(args) > 0 {
			f.Outputs = append(f.Outputs, ir.S(s.Name, args...))
		}
	}
	r, err := shardingRuleOf(fwd, f, func(name string) *ir.Var { return vars[name] })
	// The forward op's free slots: their args, and their gradients, are
	// free in the grad op too.
	var free []string
	if w, ok := r.(*freeArgs); ok {
		r = w.Einsum
		k := 0
		for _, s := range f.Inputs {
			if k < len(w.in) && w.in[k] {
				free = append(free, s.Name, s.Name+"@GRAD")
			}
			k += len(s.Args)
		}
		k = 0
		for _, s := range f.Outputs {
			if k < len(w.out) && w.out[k] {
				free = append(free, s.Name, s.Name+"@GRAD")
			}
			k += len(s.Args)
		}
	}
	// Split's and concat's rules are einsums but in one direction.
	switch w := r.(type) {
	case *splitRule:
		r = w.Einsum
	case *alignRule:
		r = w.Einsum
	case *likeOutput:
		r = w.Einsum
	case *view:
		return viewGrad(c)
	}
	e, ok := r.(*spmd.Einsum)
	if err != nil || !ok {
		return nil, err
	}
	letters := map[string]string{}
	k = 0
	for _, s := range f.Inputs {
		letters[s.Name] = e.In[k]
		k += len(s.Args)
	}
	k = 0
	for _, s := range f.Outputs {
		letters[s.Name] = e.Out[k]
		letters[s.Name+"@GRAD"] = e.Out[k]
		k += len(s.Args)
	}
	in, out := map[string]string{}, map[string]string{}
	for _, s := range c.op.Inputs {
		if l, ok := letters[s.Name]; ok && !slices.Contains(free, s.Name) {
			in[s.Name] = l
		}
	}
	for _, s := range c.op.Outputs {
		if l, ok := letters[strings.TrimSuffix(s.Name, "@GRAD")]; ok && !slices.Contains(free, s.Name) {
			out[s.Name] = l
		}
	}
	g, err := c.einsum(in, out)
	if g != nil {
		g.Reduce = ir.ReduceSum
		g.Selects = e.Selects
	}
	if free != nil {
		return c.freeing(g, err, free...)
	}
	return g, err
}

// viewGrad is the rule of a view's grad (reshape2_grad, squeeze2_grad,
// ...): X@GRAD is Out@GRAD regrouped into X's shape, the reshape rule
// the other way. XShape keeps the forward op's [-1] + X's mapping (as in
// Paddle's ReshapeGradInferSpmd, which refuses to reshard it): a rank's
// XShape holds its local X's dims, which the grad kernel reshapes its
// Out@GRAD to; replicated, it would hold the global ones.
func viewGrad(c *Infer) (spmd.ShardingRule, error) {
	return newView(c, "Out@GRAD", "X@GRAD", "", "XShape")
}
