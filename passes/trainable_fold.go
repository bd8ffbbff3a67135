package passes

import (
	"fmt"
	"strconv"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/sim"
)

// runtimeAttr is an attr an op may take at run time from tensors
// instead: from one tensor of all its values (whole) or from a list of
// one-value tensors (each), whole first, as Paddle reads them.
type runtimeAttr struct {
	attr, whole, each string
	scalar            bool // one float value (fill_constant's value)
}

// runtimeAttrs lists, by op type, the attrs Paddle's exported programs
// compute at run time (a reshape to [batch, -1, ...] reads the batch from
// a shape op): make-trainable{shape=...} folds them.
var runtimeAttrs = map[string][]runtimeAttr{
	"reshape2":      {{attr: "shape", whole: "Shape", each: "ShapeTensor"}},
	"fill_constant": {{attr: "shape", whole: "ShapeTensor", each: "ShapeTensorList"}, {attr: "value", whole: "ValueTensor", scalar: true}},
	"expand_v2":     {{attr: "shape", whole: "Shape", each: "expand_shapes_tensor"}},
	"tile":          {{attr: "repeat_times", whole: "RepeatTimes", each: "repeat_times_tensor"}},
	"slice": {{attr: "starts", whole: "StartsTensor", each: "StartsTensorList"},
		{attr: "ends", whole: "EndsTensor", each: "EndsTensorList"}},
}

// maxFoldElems bounds the values the folder computes: shapes and indices,
// not activations.
const maxFoldElems = 64

// folder proves, in program order, the values of the small int and
// float vars an exported program computes from shapes (shape, slice,
// fill_constant, concat, cast, ...) at the data input's new shape, and
// writes them into the attrs that read them at run time.
type folder struct {
	g       *ir.Block
	kernels sim.Kernels
	vals    map[string]*sim.Tensor
	folded  int
}

func newFolder(g *ir.Block) *folder {
	return &folder{g: g, kernels: sim.DefaultKernels(), vals: map[string]*sim.Tensor{}}
}

// fold writes the proven values of op's run-time attrs into the attrs and
// empties the slots that carried them, reporting whether it folded any.
// It returns the first slot it cannot fold and the arg whose value is
// unknown ("" when all folded).
func (f *folder) fold(op *ir.Op) (folded bool, slot, arg string) {
	for _, ra := range runtimeAttrs[op.Type] {
		for _, s := range []string{ra.whole, ra.each} {
			args := op.Input(s)
			if s == "" || len(args) == 0 {
				continue
			}
			var vs []float64
			for _, a := range args {
				t := f.vals[a]
				if t == nil {
					return folded, s, a
				}
				vs = append(vs, t.Data...)
			}
			if ra.scalar {
				if len(vs) != 1 {
					return folded, s, args[0]
				}
				op.Attrs.Set(ra.attr, ir.Float(vs[0]))
				if op.Attrs.Has("str_value") { // Paddle reads it before value
					op.Attrs.Set("str_value", ir.String(strconv.FormatFloat(vs[0], 'g', -1, 64)))
				}
			} else {
				is := make([]int64, len(vs))
				for i, v := range vs {
					is[i] = int64(v)
				}
				op.Attrs.Set(ra.attr, ir.Ints(is))
			}
			for i := range op.Inputs {
				if op.Inputs[i].Name == ra.whole || op.Inputs[i].Name == ra.each {
					op.Inputs[i].Args = nil
				}
			}
			f.folded++
			folded = true
			break // the whole tensor wins over the list
		}
	}
	return folded, "", ""
}

// eval records the values of op's outputs when they follow from known
// values alone: a shape op's from its input's static shape, a
// deterministic op's with every input known by running its kernel.
func (f *folder) eval(op *ir.Op) {
	if op.Type == "shape" {
		in := f.g.Var(firstArg(op.Input("Input")))
		out := firstArg(op.Output("Out"))
		if in == nil || out == "" || !in.Type.IsTensor() {
			return
		}
		data := make([]float64, len(in.Type.Shape))
		for i, d := range in.Type.Shape {
			if d < 0 {
				return
			}
			data[i] = float64(d)
		}
		if t, err := sim.FromData(ir.I32, []int64{int64(len(data))}, data); err == nil {
			f.vals[out] = t
		}
		return
	}
	k := f.kernels[op.Type]
	if k == nil || ops.Has(op.Type, ops.Random) || ops.HasSideEffects(op.Type) {
		return
	}
	for range op.SubBlocks {
		return
	}
	in := sim.Args{}
	for _, s := range op.Inputs {
		for _, a := range s.Args {
			t := f.vals[a]
			if t == nil {
				return
			}
			in[s.Name] = append(in[s.Name], t)
		}
	}
	for _, s := range op.Outputs {
		for _, a := range s.Args {
			v := f.g.Var(a)
			if v == nil || !v.Type.IsTensor() {
				return
			}
			if n, ok := v.Type.Numel(); !ok || n > maxFoldElems {
				return
			}
		}
	}
	out, err := k(op, in)
	if err != nil {
		return
	}
	for _, s := range op.Outputs {
		for i, a := range s.Args {
			if i < len(out[s.Name]) && out[s.Name][i] != nil {
				f.vals[a] = out[s.Name][i]
			}
		}
	}
}

// unprovable says why an op's run-time attr has no proven value: the
// arg, and the op that writes it.
func (f *folder) unprovable(op *ir.Op, slot, arg string, writer map[string]*ir.Op) error {
	by := "no op writes it"
	if w := writer[arg]; w != nil {
		by = "written by " + w.String()
	}
	return fmt.Errorf("%s takes %s from %s at run time, and make-trainable cannot prove the value of %s (%s): it depends on more than the input's shape", op, runtimeAttrNameOf(op.Type, slot), slot, arg, by)
}

func runtimeAttrNameOf(typ, slot string) string {
	for _, ra := range runtimeAttrs[typ] {
		if ra.whole == slot || ra.each == slot {
			return "attr " + ra.attr
		}
	}
	return "an attr"
}

func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// prune removes the ops whose values the folder proved and that no op
// reads any more (the shape arithmetic the folds left behind), last
// first, so that a chain goes at once; they cannot affect the loss.
func (f *folder) prune(keep func(name string) bool) int {
	readers := map[string]int{}
	for _, op := range f.g.Ops {
		for a := range op.InputNames {
			readers[a]++
		}
	}
	removed := 0
	for i := len(f.g.Ops) - 1; i >= 0; i-- {
		op := f.g.Ops[i]
		dead := len(op.Outputs) > 0
		for a := range op.OutputNames {
			if f.vals[a] == nil || readers[a] > 0 || keep(a) {
				dead = false
			}
		}
		if !dead {
			continue
		}
		for a := range op.InputNames {
			readers[a]--
		}
		f.g.Ops = append(f.g.Ops[:i], f.g.Ops[i+1:]...)
		removed++
	}
	return removed
}
