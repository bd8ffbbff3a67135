package passes

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// TrainableLossVar is the var make-trainable computes the loss into, the
// one to pass to append-backward{loss=...}.
const TrainableLossVar = "loss"

// MakeTrainablePass turns an imported inference program into a forward
// training program: data inputs, trainable params with a startup program,
// a label and a loss.
func MakeTrainablePass() *Pass {
	return &Pass{
		Name: "make-trainable",
		Doc: `turn an inference program into a forward training program with a loss
For a ProgramDesc inference program (as import reads it): drops the feed
and fetch ops (and the feed and fetch list vars); each fed var becomes a
data input (is_data, stop_gradient) and the one fetched var the output
(output=NAME picks it among several fetched vars: MnasNet's export
fetches two; the others stay computed, off the loss's path; without
feed ops, the is_data vars are the data inputs). output=A:0.7;B:0.3
puts the loss on several: each gets its loss and label (label, then
label_1, label_2, ...), the loss is the sum of their means, each scaled
by its weight (1 when left out). A write of a
non-persistable var already written (an op in place, as Paddle's fused
inference programs have) gets a var of its own, named <var>.out_N, and
the reads after it follow. Every is_test attr becomes false, so
batch_norm and dropout train (a dropout without its Mask output, as
inference programs may write it, gets one: a u8 var <Out>.mask; a
moving-average quantisation without its running state gets persistable
<OutScale>.state and .accum, read and written in place), and the fake
quantisations of quantisation-aware training train, with Paddle's
straight-through gradient; batch-norm=global sets batch_norm's
use_global_stats instead, so that it normalises by its running
statistics (Paddle's frozen batch norm: Scale and Bias train, the
statistics stay), which is batch-parallel.
Each persistable dense tensor of main becomes a trainable param, except
state: one an op writes, one a batch_norm reads as Mean or Variance, or
one of a non-float dtype, which stays persist. A startup program
initialises each one main does not already have an initialiser for, as
Paddle's defaults do: a conv Filter gaussian_random (mean 0, std
sqrt(2/(kh*kw*C_in))), a bias (an elementwise_add Y, a conv, batch_norm or
affine_channel Bias, a var named like Paddle's *.b_N) 0, a batch_norm or
affine_channel Scale 1, a batch_norm Variance 1, other state 0, any other
param uniform_random Xavier (limit sqrt(6/(fan_in+fan_out))); the random
ones get seeds seed, seed+1, ... in declaration order, each at most
2147483647 (Paddle's seed attr is a 32-bit int). shape=8x3x32x32
sets the data input's shape (one data input, the same rank) and re-infers,
in program order through the op table, the shape of every var that
depends on it (a reshape2's -1 and 0 follow the new shape; one whose
shape attr bakes in its input's exported dim 0, as [1, 1001] for Paddle's
traced batch of 1, while that dim changed, gets 0 there, "X's dim 0", so
that it keeps the new batch; any other baked-in dim is refused). An attr
the program computes at run time from shapes (reshape2's Shape or
ShapeTensor, fill_constant's ShapeTensor(List) and ValueTensor,
expand_v2's, tile's and slice's tensors: shape, slice, fill_constant,
concat and the like applied to the new shape) is proved, written into
the attr and its tensors dropped, and the ops that computed it are
removed once nothing reads them; one it cannot prove, where the shape
depends on it, is an error naming the op and the arg. An op
without shape inference on that path, an inference
that fails, a persistable whose shape would change, or a var left with
an unknown dim is an error naming op and var. Then a label data var
(option label) and the loss, a mean into var loss with role
forward|loss: softmax_with_cross_entropy takes an int64 label shaped like
the output with its last dim 1, mse a label like the output and computes
mean((out - label)^2) with elementwise_sub, elementwise_mul and mean. An
output that a softmax over its last axis writes (a classifier's
probabilities, as Paddle's exported models end) is not softmaxed again:
softmax_with_cross_entropy reads that softmax's input, the logits, and
the softmax stays, its output no longer on the loss's path.
Refused, each named: a PIR program (pd_op.data, pd_op.fetch),
quantization ops Paddle gives no gradient (fake_quantize_abs_max, quantize_linear, ...),
feed or fetch ops whose args are not one feed/fetch list var and one
dense tensor of block 0, feed or fetch in a sub-block, a fed var another
op writes, no fetch, several without output= or an output= that names
none of them, no data input, a label or loss name
already declared. On error the module is unchanged. Counts params,
state-vars, dropped-ops, renamed-vars, kept-batch-reshapes and
loss-on-logits, and dropout-masks, quant-states, folded-attrs and
pruned-ops when there are any.`,
		Options: []Option{
			{Name: "loss", Kind: OptString, Default: "softmax_with_cross_entropy", Doc: "the loss on the output",
				Values: []string{"softmax_with_cross_entropy", "mse"}},
			{Name: "label", Kind: OptString, Default: "label", Doc: "the name of the label data var"},
			{Name: "shape", Kind: OptString, Default: "", Doc: "the data input's new shape, dims joined by x (empty: keep)"},
			{Name: "batch-norm", Kind: OptString, Default: "batch", Doc: "the statistics batch_norm normalises by",
				Values: []string{"batch", "global"}},
			{Name: "seed", Kind: OptInt, Default: "1", Doc: "the seed of the first random initialiser (Paddle's seed attr is a 32-bit int)",
				Range: &Range{Min: 1, Max: math.MaxInt32}},
			{Name: "output", Kind: OptString, Default: "", Doc: "the fetched var(s) to put the loss on, NAME or NAME:W;NAME:W (empty: the one fetched var)"},
		},
		Run: func(ctx *Context, m *ir.Module) error {
			shape, err := ParseShape(ctx.String("shape"))
			if err != nil {
				return err
			}
			st, err := MakeTrainable(m, TrainableOptions{
				Loss: ctx.String("loss"), Label: ctx.String("label"), Shape: shape, Seed: ctx.Int("seed"),
				GlobalStats: ctx.String("batch-norm") == "global", Output: ctx.String("output"),
			})
			if err != nil {
				return err
			}
			ctx.Count("params", st.Params)
			ctx.Count("state-vars", st.State)
			ctx.Count("dropped-ops", st.Dropped)
			ctx.Count("renamed-vars", st.Renamed)
			ctx.Count("kept-batch-reshapes", st.KeptBatch)
			ctx.Count("loss-on-logits", st.Logits)
			if st.Masks > 0 {
				ctx.Count("dropout-masks", st.Masks)
			}
			if st.States > 0 {
				ctx.Count("quant-states", st.States)
			}
			if st.Folded > 0 {
				ctx.Count("folded-attrs", st.Folded)
				ctx.Count("pruned-ops", st.Pruned)
			}
			return nil
		},
	}
}

// TrainableOptions are make-trainable's options.
type TrainableOptions struct {
	Loss  string  // softmax_with_cross_entropy or mse
	Label string  // the label var's name
	Shape []int64 // the data input's new shape; nil keeps it
	Seed  int64   // the seed of the first random initialiser
	// GlobalStats has batch_norm normalise by its running statistics.
	GlobalStats bool
	// Output is the fetched var to put the loss on, or several joined
	// by ';', each with an optional weight (NAME:W; 1 when left out),
	// the loss their weighted sum; "" takes the one fetched var and
	// refuses several.
	Output string
}

// TrainableStats counts what MakeTrainable did.
type TrainableStats struct {
	Params  int // persistables made trainable params
	State   int // persistables kept as non-trainable state
	Dropped int // feed and fetch ops dropped
	Renamed int // in-place writes given a var of their own
	// KeptBatch counts reshape2 ops whose baked-in batch became 0.
	KeptBatch int
	// Logits counts the outputs whose softmax_with_cross_entropy reads
	// the input of the softmax that wrote the output.
	Logits int
	// Folded counts the attrs read at run time (a reshape2's ShapeTensor)
	// that shape= proved and made static; Pruned the ops that computed
	// them, removed once nothing read them.
	Folded, Pruned int
	// Masks counts the dropouts given the Mask output training needs;
	// States the running-state vars given moving-average quantisations.
	Masks, States int
}

// ParseShape reads a shape written as dims joined by x ("8x3x32x32");
// "" is nil. Every dim is above 0, and the element count fits int64, as
// a var's must (ir.Verify).
func ParseShape(s string) ([]int64, error) {
	if s == "" {
		return nil, nil
	}
	var out []int64
	for _, f := range strings.Split(s, "x") {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("shape %q: dim %q is not an integer above 0 (want dims joined by x, as 8x3x32x32)", s, f)
		}
		out = append(out, n)
	}
	if _, ok := ir.Tensor(ir.F32, out...).Numel(); !ok {
		return nil, fmt.Errorf("shape %q: the element count overflows int64", s)
	}
	return out, nil
}

// MakeTrainable is make-trainable's work (see its Doc). It works on a
// clone of m and replaces m's content only when everything succeeded, so
// that on error m is as it was.
func MakeTrainable(m *ir.Module, opts TrainableOptions) (TrainableStats, error) {
	if opts.Loss != "softmax_with_cross_entropy" && opts.Loss != "mse" {
		return TrainableStats{}, fmt.Errorf("unknown loss %q (want softmax_with_cross_entropy or mse)", opts.Loss)
	}
	if opts.Label == "" {
		return TrainableStats{}, errors.New("option label is empty: the label var needs a name")
	}
	if opts.Seed < 1 || opts.Seed > math.MaxInt32 {
		return TrainableStats{}, fmt.Errorf("seed=%d: want an integer from 1 to %d (Paddle's seed attr is a 32-bit int)", opts.Seed, math.MaxInt32)
	}
	if m.Main == nil || len(m.Main.Blocks) == 0 {
		return TrainableStats{}, errors.New("no main program")
	}
	w := m.Clone()
	t := &trainer{m: w, g: w.Main.Global(), opts: opts}
	if err := t.run(); err != nil {
		return TrainableStats{}, err
	}
	*m = *w
	return t.stats, nil
}

type trainer struct {
	m     *ir.Module
	g     *ir.Block // main's block 0
	opts  TrainableOptions
	data  []*ir.Var // the data inputs, in feed order
	out   *ir.Var   // the fetched var the loss is on (the first, with several)
	outs  []*ir.Var // every fetched var the loss is on, in output= order
	wts   []float64 // their weights
	stats TrainableStats
}

func (t *trainer) run() error {
	if err := t.dropFeedFetch(); err != nil {
		return err
	}
	if err := t.renameInPlace(); err != nil {
		return err
	}
	for _, b := range t.m.Main.Blocks {
		for _, op := range b.Ops {
			if ops.AttrOn(op, "is_test") {
				// Off, in the kind the program wrote it in.
				switch op.Attrs.Get("is_test").(type) {
				case ir.Int:
					op.Attrs.Set("is_test", ir.Int(0))
				case ir.Long:
					op.Attrs.Set("is_test", ir.Long(0))
				default:
					op.Attrs.Set("is_test", ir.Bool(false))
				}
			}
			if op.Type == "batch_norm" && t.opts.GlobalStats {
				op.Attrs.Set("use_global_stats", ir.Bool(true))
			}
			if op.Type == "dropout" && len(op.Output("Mask")) == 0 {
				if err := t.addMask(b, op); err != nil {
					return err
				}
			}
			if op.Type == "fake_quantize_dequantize_moving_average_abs_max" || op.Type == "moving_average_abs_max_scale" {
				if err := t.addRunningState(b, op); err != nil {
					return err
				}
			}
		}
	}
	if t.opts.Shape != nil {
		if err := t.reshape(); err != nil {
			return err
		}
	}
	if err := t.initialise(); err != nil {
		return err
	}
	return t.addLoss()
}

// renameInPlace gives each later write of a non-persistable var of block
// 0 a var of its own (Paddle's inference passes fuse ops in place, as an
// elementwise_add whose Out is its X), renaming the reads after it, so
// that append-backward finds every var defined once.
func (t *trainer) renameInPlace() error {
	if len(t.m.Main.Blocks) > 1 {
		return nil // a sub-block may read any version: leave it to append-backward
	}
	cur := map[string]string{} // a var's name to its latest version's
	defined := map[string]bool{}
	for _, op := range t.g.Ops {
		for i := range op.Inputs {
			for j, a := range op.Inputs[i].Args {
				if n, ok := cur[a]; ok {
					op.Inputs[i].Args[j] = n
				}
			}
		}
		for i := range op.Outputs {
			for j, a := range op.Outputs[i].Args {
				v := t.g.Var(a)
				if v == nil || v.Persistable() || !defined[a] {
					defined[a] = true
					continue
				}
				n := t.m.FreshName(a + ".out")
				nv := v.Clone().Named(n)
				if err := t.g.AddVar(&nv); err != nil {
					return err
				}
				cur[a] = n
				op.Outputs[i].Args[j] = n
				t.stats.Renamed++
			}
		}
	}
	for i, o := range t.outs {
		if n, ok := cur[o.Name()]; ok {
			t.outs[i] = t.g.Var(n)
		}
	}
	t.out = t.outs[0]
	return nil
}

// isQuant reports whether an op type quantizes or dequantizes and does
// not train: Paddle gives it no gradient (quantisation-aware training's
// quantise-dequantise ops and scale observer have the straight-through
// one, and train).
func isQuant(typ string) bool {
	if !strings.Contains(typ, "quantize") && typ != "moving_average_abs_max_scale" {
		return false
	}
	d := ops.Lookup(typ)
	return d == nil || d.Grad == nil
}

// dropFeedFetch checks every feed and fetch op, then drops them.
func (t *trainer) dropFeedFetch() error {
	var errs []error
	var quant, pir []string
	var feeds, fetches []*ir.Op
	for _, b := range t.m.Main.Blocks {
		for _, op := range b.Ops {
			switch {
			case op.Type == "pd_op.data" || op.Type == "pd_op.feed" || op.Type == "pd_op.fetch":
				var names []string
				names = slices.AppendSeq(names, op.OutputNames)
				pir = append(pir, fmt.Sprintf("%s (var %s)", op, strings.Join(names, ", ")))
			case isQuant(op.Type):
				quant = append(quant, op.String())
			case op.Type == "feed" || op.Type == "fetch":
				if b.Index != 0 {
					errs = append(errs, fmt.Errorf("block %d %s: a feed or fetch op outside block 0", b.Index, op))
					continue
				}
				if op.Type == "feed" {
					feeds = append(feeds, op)
				} else {
					fetches = append(fetches, op)
				}
			}
		}
	}
	if len(pir) > 0 {
		errs = append(errs, fmt.Errorf("a PIR program's inputs and outputs: make-trainable reads a ProgramDesc's feed and fetch ops, not %s",
			strings.Join(pir, ", ")))
	}
	if len(quant) > 0 {
		errs = append(errs, fmt.Errorf("quantization ops Paddle gives no gradient (an int8 model's; quantisation-aware training's quantise-dequantise ops and scale observer train): %s",
			strings.Join(quant, ", ")))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	// arg returns the one var of slot s of op, which must have type kind k.
	arg := func(op *ir.Op, slots []ir.Slot, s string, k ir.TypeKind) (*ir.Var, error) {
		var args []string
		for _, sl := range slots {
			if sl.Name == s {
				args = sl.Args
			}
		}
		if len(args) != 1 {
			return nil, fmt.Errorf("%s: slot %s has %d args, want 1", op, s, len(args))
		}
		v := t.g.Var(args[0])
		if v == nil {
			return nil, fmt.Errorf("%s: %s %s is not declared in block 0", op, s, args[0])
		}
		if v.Type.Kind != k {
			return nil, fmt.Errorf("%s: %s %s has type %s, want a %s", op, s, args[0], v.Type, k)
		}
		return v, nil
	}
	drop := map[*ir.Op]bool{}
	lists := map[string]bool{}
	var fetched []*ir.Var // the fetched vars, in program order
	for _, op := range feeds {
		l, err1 := arg(op, op.Inputs, "X", ir.FeedList)
		v, err2 := arg(op, op.Outputs, "Out", ir.DenseTensor)
		if err := errors.Join(err1, err2); err != nil {
			errs = append(errs, err)
			continue
		}
		if slices.Contains(t.data, v) {
			errs = append(errs, fmt.Errorf("%s: var %s is fed twice", op, v.Name()))
			continue
		}
		lists[l.Name()] = true
		drop[op] = true
		t.data = append(t.data, v)
	}
	for _, op := range fetches {
		v, err1 := arg(op, op.Inputs, "X", ir.DenseTensor)
		l, err2 := arg(op, op.Outputs, "Out", ir.FetchList)
		if err := errors.Join(err1, err2); err != nil {
			errs = append(errs, err)
			continue
		}
		lists[l.Name()] = true
		drop[op] = true
		fetched = append(fetched, v)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	var names []string
	for _, v := range fetched {
		names = append(names, v.Name())
	}
	switch {
	case len(fetched) == 0:
		return errors.New("no fetch op: make-trainable puts the loss on the fetched var")
	case t.opts.Output != "":
		for _, part := range strings.Split(t.opts.Output, ";") {
			name, w, weighted := strings.Cut(part, ":")
			i := slices.Index(names, name)
			if i < 0 {
				return fmt.Errorf("output=%s: %s is not a fetched var (the program fetches %s)", t.opts.Output, name, strings.Join(names, ", "))
			}
			if slices.Contains(t.outs, fetched[i]) {
				return fmt.Errorf("output=%s: %s is named twice", t.opts.Output, name)
			}
			wt := 1.0
			if weighted {
				var err error
				if wt, err = strconv.ParseFloat(w, 64); err != nil || math.IsNaN(wt) || math.IsInf(wt, 0) {
					return fmt.Errorf("output=%s: weight %q of %s is not a finite number", t.opts.Output, w, name)
				}
			}
			t.outs, t.wts = append(t.outs, fetched[i]), append(t.wts, wt)
		}
	case len(fetched) > 1:
		return fmt.Errorf("%d fetch ops (of %s): choose with output=NAME (%s), or several with output=NAME:W;NAME:W (the loss their weighted sum)",
			len(fetched), strings.Join(names, ", "), strings.Join(names, " or "))
	default:
		t.outs, t.wts = fetched[:1], []float64{1}
	}
	t.out = t.outs[0]
	if len(feeds) == 0 { // a program already written for training declares its data
		for _, v := range t.g.Vars() {
			if v.Has(ir.FlagIsData) && v.Type.IsTensor() {
				t.data = append(t.data, v)
			}
		}
		if len(t.data) == 0 {
			return errors.New("no feed op and no is_data var: the program has no data input")
		}
	}
	for _, o := range t.outs {
		if o.Persistable() || o.Has(ir.FlagIsData) || slices.Contains(t.data, o) {
			return fmt.Errorf("the fetched var %s is not computed from the data: nothing to train", o.Name())
		}
	}
	t.g.Ops = slices.DeleteFunc(t.g.Ops, func(op *ir.Op) bool { return drop[op] })
	t.stats.Dropped = len(drop)
	for _, b := range t.m.Main.Blocks {
		for _, op := range b.Ops {
			for a := range op.OutputNames {
				for _, v := range t.data {
					if a == v.Name() {
						return fmt.Errorf("%s writes the fed var %s: a data input is only read", op, a)
					}
				}
			}
			for _, ss := range [2][]ir.Slot{op.Inputs, op.Outputs} {
				for _, s := range ss {
					for _, a := range s.Args {
						delete(lists, a) // still used: keep it
					}
				}
			}
		}
	}
	for _, name := range sortedKeys(lists) {
		t.g.RemoveVar(name)
	}
	for _, v := range t.data {
		v.Flags |= ir.FlagIsData | ir.FlagStopGradient
	}
	taken := []string{t.opts.Label, TrainableLossVar}
	for i := 1; i < len(t.outs); i++ {
		taken = append(taken, t.opts.Label+"_"+strconv.Itoa(i))
	}
	for _, name := range taken {
		if t.g.Var(name) != nil || t.m.Startup != nil && t.m.Startup.Global().Var(name) != nil {
			return fmt.Errorf("var %s is already declared: make-trainable declares it (choose another label=)", name)
		}
	}
	if t.opts.Label == TrainableLossVar {
		return fmt.Errorf("label %s: that is the loss var's name", TrainableLossVar)
	}
	return nil
}

func sortedKeys(s map[string]bool) []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// addMask gives a dropout of an inference program, which may omit its
// Mask, the Mask output a training dropout writes and its grad reads: a
// u8 var of X's shape named after Out.
func (t *trainer) addMask(b *ir.Block, op *ir.Op) error {
	x := b.Var(firstArg(op.Input("X")))
	out := firstArg(op.Output("Out"))
	if x == nil || out == "" || !x.Type.IsTensor() {
		return fmt.Errorf("%s: no dense X and Out to give a Mask", op)
	}
	name := out + ".mask"
	for k := 1; b.Var(name) != nil; k++ {
		name = out + ".mask_" + strconv.Itoa(k)
	}
	mv := ir.Var{Kind: ir.KindVar, Type: ir.Tensor(ir.U8, x.Type.Shape...)}.Named(name)
	if err := b.AddVar(&mv); err != nil {
		return err
	}
	for i := range op.Outputs {
		if op.Outputs[i].Name == "Mask" {
			op.Outputs[i].Args = []string{name}
			t.stats.Masks++
			return nil
		}
	}
	op.Outputs = append(op.Outputs, ir.S("Mask", name))
	t.stats.Masks++
	return nil
}

// addRunningState gives a moving-average quantisation of an inference
// program, which may omit its running state (InState, InAccum and their
// outputs, dispensable at test), the state training updates: persistable
// one-value vars named after OutScale, read and written in place.
func (t *trainer) addRunningState(b *ir.Block, op *ir.Op) error {
	x, scale := b.Var(firstArg(op.Input("X"))), firstArg(op.Output("OutScale"))
	if x == nil || scale == "" || !x.Type.IsTensor() {
		return fmt.Errorf("%s: no dense X and OutScale to keep a running state for", op)
	}
	for _, p := range [][3]string{{"InState", "OutState", ".state"}, {"InAccum", "OutAccum", ".accum"}} {
		if len(op.Input(p[0])) > 0 && len(op.Output(p[1])) > 0 {
			continue
		}
		if len(op.Input(p[0]))+len(op.Output(p[1])) > 0 {
			return fmt.Errorf("%s: %s and %s go together: one without the other", op, p[0], p[1])
		}
		name := scale + p[2]
		for k := 1; b.Var(name) != nil; k++ {
			name = scale + p[2] + "_" + strconv.Itoa(k)
		}
		sv := ir.Var{Kind: ir.KindPersist, Type: ir.Tensor(x.Type.DType, 1)}.Named(name)
		if err := b.AddVar(&sv); err != nil {
			return err
		}
		setSlot(&op.Inputs, p[0], name)
		setSlot(&op.Outputs, p[1], name)
		t.stats.States++
	}
	return nil
}

// setSlot sets slot name of ss to the one arg a, appending the slot when
// ss lacks it.
func setSlot(ss *[]ir.Slot, name, a string) {
	for i := range *ss {
		if (*ss)[i].Name == name {
			(*ss)[i].Args = []string{a}
			return
		}
	}
	*ss = append(*ss, ir.S(name, a))
}

// hasUnknownDim reports whether an output of op is declared with an
// unknown dim.
func hasUnknownDim(g *ir.Block, op *ir.Op) bool {
	for a := range op.OutputNames {
		if v := g.Var(a); v != nil && v.Type.IsTensor() && slices.Contains(v.Type.Shape, -1) {
			return true
		}
	}
	return false
}

// reshape sets the data input's shape and re-infers, in program order,
// the outputs of every op that reads a var whose shape changed.
func (t *trainer) reshape() error {
	if len(t.data) != 1 {
		var names []string
		for _, v := range t.data {
			names = append(names, v.Name())
		}
		return fmt.Errorf("shape=: the program has %d data inputs (%s), want one", len(t.data), strings.Join(names, ", "))
	}
	if len(t.m.Main.Blocks) > 1 {
		return errors.New("shape=: main has sub-blocks, which make-trainable does not re-infer")
	}
	d := t.data[0]
	if d.Type.Rank() != len(t.opts.Shape) {
		return fmt.Errorf("shape=%v: data input %s has rank %d (%s)", t.opts.Shape, d.Name(), d.Type.Rank(), d.Type)
	}
	changed := map[string]bool{}
	old := map[string][]int64{} // the exported shape of each changed var
	if !slices.Equal(d.Type.Shape, t.opts.Shape) {
		old[d.Name()] = d.Type.Shape
		d.Type.Shape = slices.Clone(t.opts.Shape)
		changed[d.Name()] = true
	}
	writer := map[string]*ir.Op{}
	f := newFolder(t.g)
	for _, op := range t.g.Ops {
		for a := range op.OutputNames {
			writer[a] = op
		}
		reads := false
		for a := range op.InputNames {
			reads = reads || changed[a]
		}
		folded, slot, arg := f.fold(op)
		reads = reads || folded // re-infer with the attrs now static
		if !reads {
			if slot != "" && hasUnknownDim(t.g, op) {
				return fmt.Errorf("shape=: %w", f.unprovable(op, slot, arg, writer))
			}
			f.eval(op)
			continue
		}
		if def := ops.Lookup(op.Type); def == nil || def.Infer == nil {
			return fmt.Errorf("shape=: %s reads a var whose shape changed, and the op table has no shape inference for %s", op, op.Type)
		}
		outs, err := ops.InferOp(op, t.g.Var)
		if err != nil {
			if outs, err = t.keepBatch(op, old, err); err != nil {
				return fmt.Errorf("shape=: %w%s", err, t.reshapeHint(op))
			}
		}
		if outs == nil {
			return fmt.Errorf("shape=: %s: an input is not declared in block 0", op)
		}
		for _, o := range outs {
			args := op.Output(o.Slot)
			if o.Index >= len(args) {
				continue
			}
			v := t.g.Var(args[o.Index])
			if v == nil || !v.Type.IsTensor() {
				continue
			}
			shape := o.Type.Shape
			switch {
			case o.Scalar:
				shape = v.Type.Shape
				if n, ok := v.Type.Numel(); !ok || n != 1 {
					shape = nil
				}
			case len(shape) == v.Type.Rank():
				shape = slices.Clone(shape)
				for i, n := range shape {
					if n < 0 { // left open: keep the declared dim
						shape[i] = v.Type.Shape[i]
					}
				}
			}
			if slices.Equal(shape, v.Type.Shape) {
				continue
			}
			if v.Persistable() {
				return fmt.Errorf("shape=: %s would change persistable %s from %v to %v", op, v.Name(), v.Type.Shape, shape)
			}
			old[v.Name()] = v.Type.Shape
			v.Type.Shape = shape
			changed[v.Name()] = true
		}
		if slot != "" {
			for _, o := range outs {
				if slices.Contains(o.Type.Shape, -1) {
					return fmt.Errorf("shape=: %w", f.unprovable(op, slot, arg, writer))
				}
			}
		}
		f.eval(op)
	}
	t.stats.Folded = f.folded
	t.stats.Pruned = f.prune(func(name string) bool {
		v := t.g.Var(name)
		return v == nil || v.Persistable() || slices.Contains(t.outs, v)
	})
	for _, v := range t.g.Vars() {
		if v.Persistable() || !v.Type.IsTensor() || !changed[v.Name()] && writer[v.Name()] == nil {
			continue
		}
		if slices.ContainsFunc(v.Type.Shape, func(n int64) bool { return n < 0 }) {
			by := ""
			if op := writer[v.Name()]; op != nil {
				by = " (written by " + op.String() + ")"
			}
			return fmt.Errorf("shape=: var %s%s is left with an unknown dim: %s", v.Name(), by, v.Type)
		}
	}
	return nil
}

// keepBatch retries the inference of a reshape2 that failed with err
// when its shape attr bakes in X's exported dim 0 (the batch Paddle
// traced with, as [1, 1001]) and that dim changed: dim 0 of the attr
// becomes 0, Paddle's "copy X's dim", so that the reshape keeps the new
// batch. Any other failure is err.
func (t *trainer) keepBatch(op *ir.Op, old map[string][]int64, err error) ([]ops.Output, error) {
	if op.Type != "reshape2" || len(op.Input("Shape")) > 0 || len(op.Input("ShapeTensor")) > 0 || len(op.Input("X")) != 1 {
		return nil, err
	}
	s, ok := ir.AsInts(ops.AttrValue(op, "shape"))
	x := t.g.Var(op.Input("X")[0])
	was := old[op.Input("X")[0]]
	if !ok || len(s) == 0 || x == nil || len(was) == 0 || x.Type.Rank() == 0 || s[0] != was[0] || x.Type.Shape[0] == was[0] {
		return nil, err
	}
	keep := slices.Clone(s)
	keep[0] = 0
	op.Attrs.Set("shape", ir.Ints(keep))
	outs, err2 := ops.InferOp(op, t.g.Var)
	if err2 != nil {
		op.Attrs.Set("shape", ir.Ints(s))
		return nil, err
	}
	t.stats.KeptBatch++
	return outs, nil
}

// reshapeHint says, for a reshape2 whose inference failed, what its shape
// attr asks of which input.
func (t *trainer) reshapeHint(op *ir.Op) string {
	if op.Type != "reshape2" {
		return ""
	}
	s, _ := ir.AsInts(ops.AttrValue(op, "shape"))
	return fmt.Sprintf(" (its shape attr %s bakes in dims of the exported shape; make-trainable rewrites only an exported dim 0 of X that changed)", ops.ValueString(ir.Ints(s)))
}

// use is one read of a var: the op and the input slot.
type use struct {
	op   *ir.Op
	slot string
}

// paddleBias matches the names Paddle gives bias params (fc_0.b_0).
var paddleBias = regexp.MustCompile(`\.b_[0-9]+$`)

// initialise makes the persistables params or state and gives each an
// initialiser in the startup program.
func (t *trainer) initialise() error {
	uses := map[string][]use{}
	written := map[string]bool{}
	for _, b := range t.m.Main.Blocks {
		for _, op := range b.Ops {
			for _, s := range op.Inputs {
				for _, a := range s.Args {
					uses[a] = append(uses[a], use{op, s.Name})
				}
			}
			for a := range op.OutputNames {
				written[a] = true
			}
		}
	}
	inited := map[string]bool{}
	if t.m.Startup != nil {
		for _, b := range t.m.Startup.Blocks {
			for _, op := range b.Ops {
				for a := range op.OutputNames {
					inited[a] = true
				}
			}
		}
	}
	b := ir.NewBuilder(t.m)
	s := b.Startup()
	sg := t.m.Startup.Global()
	seed := t.opts.Seed
	for _, v := range t.g.Vars() {
		if !v.Persistable() || !v.Type.IsTensor() {
			continue
		}
		for _, n := range v.Type.Shape {
			if n < 0 {
				return fmt.Errorf("persistable %s has an unknown dim: %s", v.Name(), v.Type)
			}
		}
		code, ok := v.Type.DType.PaddleCode()
		if !ok {
			return fmt.Errorf("persistable %s: dtype %s has no Paddle code", v.Name(), v.Type.DType)
		}
		state := written[v.Name()] || !v.Type.DType.IsFloat()
		for _, u := range uses[v.Name()] {
			state = state || u.op.Type == "batch_norm" && (u.slot == "Mean" || u.slot == "Variance")
		}
		if state {
			v.Kind = ir.KindPersist
			v.Flags &^= ir.FlagTrainable
			t.stats.State++
		} else {
			v.Kind = ir.KindParam
			v.Flags |= ir.FlagTrainable
			t.stats.Params++
		}
		if sv := sg.Var(v.Name()); sv != nil {
			sv.Kind, sv.Flags = v.Kind, v.Flags
		} else if err := sg.AddVar(v.Clone()); err != nil {
			return err
		}
		if inited[v.Name()] {
			continue
		}
		typ, attrs := initialiserOf(v, uses[v.Name()], state)
		shape := make(ir.Ints, len(v.Type.Shape))
		copy(shape, v.Type.Shape)
		attrs = append([]ir.Attr{ir.A("dtype", ir.Int(code)), ir.A("shape", shape)}, attrs...)
		if typ != "fill_constant" {
			if seed > math.MaxInt32 {
				return fmt.Errorf("seed=%d: the random initialiser of %s would take seed %d, past %d (Paddle's seed attr is a 32-bit int): give a smaller seed",
					t.opts.Seed, v.Name(), seed, math.MaxInt32)
			}
			attrs = append(attrs, ir.A("seed", ir.Int(seed)))
			seed++
		}
		s.Op(typ, nil, ir.Slots("Out", v.Name()), attrs...)
	}
	return b.Err()
}

// initialiserOf picks the startup op (and its attrs but dtype, shape and
// seed) that initialises v, after Paddle's defaults for the slot that
// reads it.
func initialiserOf(v *ir.Var, uses []use, state bool) (string, []ir.Attr) {
	fill := func(x float64) (string, []ir.Attr) {
		return "fill_constant", []ir.Attr{ir.A("value", ir.Float(x))}
	}
	for _, u := range uses {
		switch {
		case u.op.Type == "batch_norm" && u.slot == "Variance":
			return fill(1)
		case (u.op.Type == "batch_norm" || u.op.Type == "affine_channel") && u.slot == "Scale":
			return fill(1)
		case u.slot == "Bias" || u.op.Type == "elementwise_add" && u.slot == "Y":
			return fill(0)
		case strings.HasPrefix(u.op.Type, "conv") || u.op.Type == "depthwise_conv2d":
			if u.slot != "Filter" || v.Type.Rank() < 3 {
				continue
			}
			// Paddle's conv default: Normal(0, sqrt(2/fan_in)), fan_in the
			// filter's spatial size times the input's channels (all groups).
			groups := int64(1)
			if g, ok := ir.AsInt(ops.AttrValue(u.op, "groups")); ok && g > 0 {
				groups = g
			}
			fan := v.Type.Shape[1] * groups
			for _, n := range v.Type.Shape[2:] {
				fan *= n
			}
			return "gaussian_random", []ir.Attr{ir.A("mean", ir.Float(0)), ir.A("std", ir.Float(math.Sqrt(2/float64(max(fan, 1)))))}
		}
	}
	if state || paddleBias.MatchString(v.Name()) {
		return fill(0)
	}
	// Paddle's default for a param that is not a bias: Xavier uniform.
	fanIn, fanOut := xavierFans(v.Type.Shape)
	limit := math.Sqrt(6 / float64(max(fanIn+fanOut, 1)))
	return "uniform_random", []ir.Attr{ir.A("min", ir.Float(-limit)), ir.A("max", ir.Float(limit))}
}

// xavierFans computes fan in and fan out as Paddle's Xavier initialiser
// does: a matrix's rows and columns; beyond rank 2, dims 1 and 0 times
// the product of the rest.
func xavierFans(shape []int64) (int64, int64) {
	switch len(shape) {
	case 0:
		return 1, 1
	case 1:
		return shape[0], shape[0]
	case 2:
		return shape[0], shape[1]
	}
	r := int64(1)
	for _, n := range shape[2:] {
		r *= n
	}
	return shape[1] * r, shape[0] * r
}

// softmaxInput returns the logits of out: the input of a softmax over
// the last axis whose probabilities out is, through the ops Paddle's
// exports put after it that keep every row (a scale by 1 with bias 0, as
// save_inference_model adds; a reshape2 that keeps the last dim), when
// they have out's type; nil otherwise.
func (t *trainer) softmaxInput(out *ir.Var) *ir.Var {
	writer := map[string]*ir.Op{}
	for _, op := range t.g.Ops {
		for name := range op.OutputNames {
			writer[name] = op
		}
	}
	v := out
	for range len(t.g.Ops) {
		op := writer[v.Name()]
		if op == nil || len(op.Input("X")) != 1 {
			return nil
		}
		x := t.g.Var(op.Input("X")[0])
		if x == nil || x.Type.Rank() == 0 || x.Type.Shape[x.Type.Rank()-1] != v.Type.Shape[v.Type.Rank()-1] {
			return nil
		}
		switch op.Type {
		case "softmax":
			axis, ok := ir.AsInt(ops.AttrValue(op, "axis"))
			if ok && axis != -1 && axis != int64(x.Type.Rank()-1) {
				return nil
			}
			if x.Type.DType != out.Type.DType || !slices.Equal(x.Type.Shape, out.Type.Shape) {
				return nil
			}
			return x
		case "scale":
			scale, ok := ir.AsFloat(ops.AttrValue(op, "scale"))
			if !ok {
				scale = 1 // Paddle's default
			}
			bias, _ := ir.AsFloat(ops.AttrValue(op, "bias"))
			if scale != 1 || bias != 0 || len(op.Input("ScaleTensor")) > 0 {
				return nil
			}
		case "reshape2":
		default:
			return nil
		}
		v = x
	}
	return nil
}

// addLoss declares the labels and appends the loss ops on the outputs:
// one output's loss is the mean of its loss elements; several outputs'
// is the weighted sum of each one's mean.
func (t *trainer) addLoss() error {
	b := ir.NewBuilder(t.m)
	dt := t.outs[0].Type.DType
	if len(t.outs) == 1 {
		last, err := t.lossOf(b, t.outs[0], t.opts.Label)
		if err != nil {
			return err
		}
		b.Var(TrainableLossVar, ir.Tensor(dt))
		b.Op("mean", ir.Slots("X", last), ir.Slots("Out", TrainableLossVar)).WithRole(ir.RoleLoss)
		return b.Err()
	}
	sum := ""
	for i, out := range t.outs {
		if out.Type.DType != dt {
			return fmt.Errorf("outputs %s and %s are %s and %s: the weighted sum needs one dtype", t.outs[0].Name(), out.Name(), dt, out.Type.DType)
		}
		label := t.opts.Label
		if i > 0 {
			label += "_" + strconv.Itoa(i)
		}
		last, err := t.lossOf(b, out, label)
		if err != nil {
			return err
		}
		mean, term := t.m.FreshName(out.Name()+".loss"), t.m.FreshName(out.Name()+".wloss")
		b.Var(mean, ir.Tensor(dt))
		b.Var(term, ir.Tensor(dt))
		b.Op("mean", ir.Slots("X", last), ir.Slots("Out", mean))
		b.Op("scale", ir.Slots("X", mean), ir.Slots("Out", term), ir.A("scale", ir.Float(t.wts[i])), ir.A("bias", ir.Float(0)), ir.A("bias_after_scale", ir.Bool(true)))
		if sum == "" {
			sum = term
			continue
		}
		next := TrainableLossVar
		if i < len(t.outs)-1 {
			next = t.m.FreshName("loss.sum")
		}
		b.Var(next, ir.Tensor(dt))
		op := b.Op("elementwise_add", ir.Slots("X", sum, "Y", term), ir.Slots("Out", next), ir.A("axis", ir.Int(-1)))
		if next == TrainableLossVar {
			op.WithRole(ir.RoleLoss)
		}
		sum = next
	}
	return b.Err()
}

// lossOf declares label and appends the loss elements of out, returning
// the var the mean reads.
func (t *trainer) lossOf(b *ir.Builder, out *ir.Var, label string) (string, error) {
	if !out.Type.IsTensor() || !out.Type.DType.IsFloat() || out.Type.Rank() == 0 {
		return "", fmt.Errorf("the output %s is %s: the loss needs a float tensor of rank 1 or more", out.Name(), out.Type)
	}
	if t.g.Var(label) != nil {
		return "", fmt.Errorf("label var %s is already declared", label)
	}
	dt := out.Type.DType
	switch t.opts.Loss {
	case "softmax_with_cross_entropy":
		if x := t.softmaxInput(out); x != nil {
			out = x
			t.stats.Logits++
		}
		lshape := slices.Clone(out.Type.Shape)
		lshape[len(lshape)-1] = 1
		b.Var(label, ir.Tensor(ir.I64, lshape...)).WithFlags(ir.FlagIsData | ir.FlagStopGradient)
		sm, xent := t.m.FreshName(out.Name()+".softmax"), t.m.FreshName(out.Name()+".xent")
		b.Var(sm, ir.Tensor(dt, slices.Clone(out.Type.Shape)...))
		b.Var(xent, ir.Tensor(dt, slices.Clone(lshape)...))
		b.Op("softmax_with_cross_entropy", ir.Slots("Logits", out.Name(), "Label", label),
			ir.Slots("Softmax", sm, "Loss", xent),
			ir.A("axis", ir.Int(-1)), ir.A("ignore_index", ir.Int(-100)), ir.A("soft_label", ir.Bool(false)))
		return xent, nil
	default: // mse
		b.Var(label, ir.Tensor(dt, slices.Clone(out.Type.Shape)...)).WithFlags(ir.FlagIsData | ir.FlagStopGradient)
		diff, sq := t.m.FreshName(out.Name()+".diff"), t.m.FreshName(out.Name()+".sq")
		b.Var(diff, ir.Tensor(dt, slices.Clone(out.Type.Shape)...))
		b.Var(sq, ir.Tensor(dt, slices.Clone(out.Type.Shape)...))
		b.Op("elementwise_sub", ir.Slots("X", out.Name(), "Y", label), ir.Slots("Out", diff), ir.A("axis", ir.Int(-1)))
		b.Op("elementwise_mul", ir.Slots("X", diff, "Y", diff), ir.Slots("Out", sq), ir.A("axis", ir.Int(-1)))
		return sq, nil
	}
}
