package check_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
)

// The per-impl property: for a representative op of each impl, every
// combination of its args' mappings on a 2×2 and a 1-D 4-rank mesh is
// either refused (by check-annotations or the impl's Compatible) or
// partitioned into programs that check proves equal to the serial one,
// forward and, through a loss and append-backward, backward. Accepted
// implies numerically right.
//
// The module around the op: an activation arg x is computed as x.d *
// x.p from data x.d and a parameter x.p mapped as x, so that its
// gradient reaches a compared param grad; a weight arg is a parameter;
// the loss is the mean of a value split at most along its dim 0 (partial
// avg there), reached from the op's output through a row-parallel
// matmul when the output is split along its last dim (and a transpose
// first when along a middle dim). An output that no such sink reaches is
// checked forward only. Combinations whose grads the data-parallel sync
// (the batch-dim rule) cannot average right are refused by
// check-annotations, and count as refused. With -short or -race a
// combination in eight is tried, and every documented one.

// propArg is one arg of the representative op.
type propArg struct {
	slot, name string
	shape      []int64
	kind       argKind
}

type argKind int

const (
	actArg    argKind = iota // an activation: x.d * x.p
	weightArg                // a parameter
	idsArg                   // integer data, no gradient
	outArg                   // an output
	shapeArg                 // an XShape output (no gradient)
)

// propCase is the representative op of an impl.
type propCase struct {
	name      string // the row of the table
	impl      string // "matmul_v2:0"
	op        string
	attrs     string // the op's attrs, as text
	args      []propArg
	documents []string // mapping combos ("x=[0, -1] w=[-1, 1] ...") the impl must accept, on the 2×2 mesh
}

func (c propCase) implType() (string, int) {
	typ, idx, _ := strings.Cut(c.impl, ":")
	n := 0
	fmt.Sscan(idx, &n)
	return typ, n
}

func ints64(xs ...int64) []int64 { return xs }

func propCases() []propCase {
	var cs []propCase
	mm := func(typ string, impl int, xs, ys, os []int64, attrs string, doc ...string) propCase {
		return propCase{
			name: fmt.Sprintf("%s:%d x%d", typ, impl, len(xs)), impl: fmt.Sprintf("%s:%d", typ, impl), op: typ, attrs: attrs,
			args:      []propArg{{"X", "x", xs, actArg}, {"Y", "w", ys, weightArg}, {"Out", "out", os, outArg}},
			documents: doc,
		}
	}
	// Two activations: attention's scores and context (a batched matmul
	// for impl 2), and a column or row split of a Y that is no parameter.
	mmAct := func(typ string, impl int, doc ...string) propCase {
		xs, ys, os := ints64(4, 4), ints64(4, 8), ints64(4, 8)
		if impl == 2 {
			xs, ys, os = ints64(4, 4, 4), ints64(4, 4, 8), ints64(4, 4, 8)
		}
		c := mm(typ, impl, xs, ys, os, "{trans_x = false, trans_y = false}", doc...)
		c.name += " act Y"
		c.args[1] = propArg{"Y", "y", ys, actArg}
		return c
	}
	for _, typ := range []string{"matmul_v2", "matmul"} {
		attrs := "{trans_x = false, trans_y = false}"
		if typ == "matmul" {
			attrs = "{transpose_X = false, transpose_Y = false}"
		}
		cs = append(cs,
			mm(typ, 0, ints64(4, 4), ints64(4, 8), ints64(4, 8), attrs, "x=[0, -1] w=[-1, 1] out=[0, 1]"),
			mm(typ, 1, ints64(4, 4), ints64(4, 8), ints64(4, 8), attrs, "x=[0, 1] w=[1, -1] out=[0, -1]"),
			mm(typ, 2, ints64(4, 4), ints64(4, 8), ints64(4, 8), attrs, "x=[-1, -1] w=[-1, -1] out=[-1, -1]"))
	}
	cs = append(cs,
		mm("matmul_v2", 0, ints64(4, 4, 4), ints64(4, 8), ints64(4, 4, 8), "{trans_x = false, trans_y = false}", "x=[0, -1, -1] w=[-1, 1] out=[0, -1, 1]"),
		mm("matmul_v2", 1, ints64(4, 4, 4), ints64(4, 8), ints64(4, 4, 8), "{trans_x = false, trans_y = false}", "x=[0, -1, 1] w=[1, -1] out=[0, -1, -1]"),
		mm("matmul_v2", 2, ints64(4, 4, 4), ints64(4, 8), ints64(4, 4, 8), "{trans_x = false, trans_y = false}", "x=[0, -1, -1] w=[-1, -1] out=[0, -1, -1]"),
		mmAct("matmul_v2", 0, "x=[-1, -1] y=[-1, 1] out=[-1, 1]"),
		// No combination is accepted: a Y split on its rows is an
		// activation whose dim 0 is split along mp, and the data-parallel
		// grad sync would average its param's grad over mp (refused).
		mmAct("matmul_v2", 1),
		mmAct("matmul_v2", 2, "x=[0, -1, -1] y=[0, -1, -1] out=[0, -1, -1]"),
		mm("mul", 0, ints64(4, 4), ints64(4, 8), ints64(4, 8), "", "x=[0, -1] w=[-1, 1] out=[0, 1]"),
		mm("mul", 1, ints64(4, 4), ints64(4, 8), ints64(4, 8), "", "x=[0, 1] w=[1, -1] out=[0, -1]"),
		mm("mul", 2, ints64(4, 4), ints64(4, 8), ints64(4, 8), "", "x=[-1, -1] w=[-1, -1] out=[-1, -1]"),
		propCase{name: "elementwise:0 add+bias", impl: "elementwise:0", op: "elementwise_add", attrs: "{axis = -1}",
			args:      []propArg{{"X", "x", ints64(4, 8), actArg}, {"Y", "b", ints64(8), weightArg}, {"Out", "out", ints64(4, 8), outArg}},
			documents: []string{"x=[0, 1] b=[1] out=[0, 1]", "x=[0, -1] b=[-1] out=[0, -1]"}},
		propCase{name: "elementwise:0 mul", impl: "elementwise:0", op: "elementwise_mul", attrs: "{axis = -1}",
			args:      []propArg{{"X", "x", ints64(4, 8), actArg}, {"Y", "y", ints64(4, 8), actArg}, {"Out", "out", ints64(4, 8), outArg}},
			documents: []string{"x=[0, 1] y=[0, 1] out=[0, 1]"}},
		propCase{name: "elementwise:0 relu", impl: "elementwise:0", op: "relu",
			args:      []propArg{{"X", "x", ints64(4, 4, 8), actArg}, {"Out", "out", ints64(4, 4, 8), outArg}},
			documents: []string{"x=[0, -1, 1] out=[0, -1, 1]"}},
		propCase{name: "default:0 relu", impl: "default:0", op: "relu",
			args:      []propArg{{"X", "x", ints64(4, 8), actArg}, {"Out", "out", ints64(4, 8), outArg}},
			documents: []string{"x=[0, -1] out=[0, -1]"}},
		propCase{name: "default:0 add+bias", impl: "default:0", op: "elementwise_add", attrs: "{axis = -1}",
			args:      []propArg{{"X", "x", ints64(4, 8), actArg}, {"Y", "b", ints64(8), weightArg}, {"Out", "out", ints64(4, 8), outArg}},
			documents: []string{"x=[0, -1] b=[-1] out=[0, -1]"}},
		propCase{name: "default:0 reduce_sum dim 0", impl: "default:0", op: "reduce_sum", attrs: "{dim = [0], keep_dim = false, reduce_all = false}",
			args: []propArg{{"X", "x", ints64(4, 8), actArg}, {"Out", "out", ints64(8), outArg}},
			// A sum over the split batch is partial [0], and so is the
			// loss, a sum the grad sync would average: refused trained.
			documents: []string{"x=[-1, -1] out=[-1]"}},
		propCase{name: "lookup_table_v2:0", impl: "lookup_table_v2:0", op: "lookup_table_v2", attrs: "{padding_idx = -1}",
			args:      []propArg{{"Ids", "ids", ints64(4, 4), idsArg}, {"W", "w", ints64(8, 4), weightArg}, {"Out", "out", ints64(4, 4, 4), outArg}},
			documents: []string{"ids=[0, -1] w=[1, -1] out=[0, -1, -1]"}},
		propCase{name: "softmax:0 axis -1", impl: "softmax:0", op: "softmax", attrs: "{axis = -1}",
			args:      []propArg{{"X", "x", ints64(4, 8), actArg}, {"Out", "out", ints64(4, 8), outArg}},
			documents: []string{"x=[0, -1] out=[0, -1]"}},
		propCase{name: "softmax:0 axis 1", impl: "softmax:0", op: "softmax", attrs: "{axis = 1}",
			args:      []propArg{{"X", "x", ints64(4, 4, 8), actArg}, {"Out", "out", ints64(4, 4, 8), outArg}},
			documents: []string{"x=[0, -1, 1] out=[0, -1, 1]"}},
		propCase{name: "transpose2:0 [0, 2, 1]", impl: "transpose2:0", op: "transpose2", attrs: "{axis = [0, 2, 1]}",
			args: []propArg{{"X", "x", ints64(4, 4, 8), actArg}, {"Out", "out", ints64(4, 8, 4), outArg},
				{"XShape", "xs", ints64(0, 4, 4, 8), shapeArg}},
			documents: []string{"x=[0, -1, 1] out=[0, 1, -1] xs=[-1, 0, -1, 1]"}},
		propCase{name: "transpose2:0 [1, 0]", impl: "transpose2:0", op: "transpose2", attrs: "{axis = [1, 0]}",
			args: []propArg{{"X", "x", ints64(4, 8), actArg}, {"Out", "out", ints64(8, 4), outArg},
				{"XShape", "xs", ints64(0, 4, 8), shapeArg}},
			documents: []string{"x=[-1, -1] out=[-1, -1] xs=[-1, -1, -1]"}},
		propCase{name: "reshape2:0 add dim", impl: "reshape2:0", op: "reshape2", attrs: "{shape = [4, 8, 1]}",
			args: []propArg{{"X", "x", ints64(4, 8), actArg}, {"Out", "out", ints64(4, 8, 1), outArg},
				{"XShape", "xs", ints64(0, 4, 8), shapeArg}},
			documents: []string{"x=[0, 1] out=[0, 1, -1] xs=[-1, 0, 1]"}},
		propCase{name: "reshape2:1 remove dim", impl: "reshape2:1", op: "reshape2", attrs: "{shape = [4, 8]}",
			args: []propArg{{"X", "x", ints64(4, 8, 1), actArg}, {"Out", "out", ints64(4, 8), outArg},
				{"XShape", "xs", ints64(0, 4, 8, 1), shapeArg}},
			documents: []string{"x=[0, 1, -1] out=[0, 1] xs=[-1, 0, 1, -1]"}},
		propCase{name: "reshape2:2 [4, 8] -> [8, 4]", impl: "reshape2:2", op: "reshape2", attrs: "{shape = [8, 4]}",
			args: []propArg{{"X", "x", ints64(4, 8), actArg}, {"Out", "out", ints64(8, 4), outArg},
				{"XShape", "xs", ints64(0, 4, 8), shapeArg}},
			documents: []string{"x=[0, -1] out=[0, -1] xs=[-1, 0, -1]"}},
		propCase{name: "reshape2:2 [4, 4, 8] -> [4, 8, 4]", impl: "reshape2:2", op: "reshape2", attrs: "{shape = [4, 8, 4]}",
			args: []propArg{{"X", "x", ints64(4, 4, 8), actArg}, {"Out", "out", ints64(4, 8, 4), outArg},
				{"XShape", "xs", ints64(0, 4, 4, 8), shapeArg}},
			documents: []string{"x=[0, -1, -1] out=[0, -1, -1] xs=[-1, 0, -1, -1]"}},
	)
	return cs
}

// propMesh is one of the two meshes the property runs on.
type propMesh struct {
	decl string
	dims int
}

var propMeshes = []propMesh{
	{"mesh w shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]", 2},
	{"mesh w shape [4] dims [x] ranks [0, 1, 2, 3]", 1},
}

// mappings returns every dims_mapping of a rank-r tensor on a mesh of
// dims mesh dims: each entry -1 or a mesh dim, none twice.
func mappings(r, dims int) [][]int {
	out := [][]int{{}}
	for range r {
		var next [][]int
		for _, m := range out {
			for a := -1; a < dims; a++ {
				if a >= 0 && slices.Contains(m, a) {
					continue
				}
				next = append(next, append(slices.Clone(m), a))
			}
		}
		out = next
	}
	return out
}

func fmtMap(m []int) string { return ir.FormatInts(m) }

func fmtShape(s []int64) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// build writes the module of one combination: the op with its args
// mapped as ms, what feeds its activations, a sink to the loss when one
// reaches it (backward reports whether one did).
func (c propCase) build(mesh propMesh, ms [][]int, partialOut int) (src string, backward bool) {
	var vars, ops strings.Builder
	id := 0
	op := func(format string, a ...any) {
		id++
		fmt.Fprintf(&ops, "    op %d %s\n", id, fmt.Sprintf(format, a...))
	}
	var ins, outs, inDist, outDist []string
	var out []int
	var outShape []int64
	for i, a := range c.args {
		m, t := fmtMap(ms[i]), fmtShape(a.shape)
		switch a.kind {
		case actArg:
			fmt.Fprintf(&vars, "    var %s.d : f64%s @w%s {is_data, stop_gradient}\n", a.name, t, m)
			fmt.Fprintf(&vars, "    param %s.p : f64%s @w%s {trainable}\n", a.name, t, m)
			fmt.Fprintf(&vars, "    var %s : f64%s @w%s\n", a.name, t, m)
			op("elementwise_mul(X: %[1]s.d, Y: %[1]s.p) -> (Out: %[1]s) {axis = -1} role forward\n         dist @w impl elementwise:0 [%[1]s.d: %[2]s, %[1]s.p: %[2]s -> %[1]s: %[2]s]", a.name, m)
		case weightArg:
			fmt.Fprintf(&vars, "    param %s : f64%s @w%s {trainable}\n", a.name, t, m)
		case idsArg:
			fmt.Fprintf(&vars, "    var %s : i64%s @w%s {is_data, stop_gradient}\n", a.name, t, m)
		case outArg:
			p := ""
			if partialOut >= 0 {
				p = fmt.Sprintf(" partial [%d]", partialOut)
			}
			fmt.Fprintf(&vars, "    var %s : f64%s @w%s%s\n", a.name, t, m, p)
			out, outShape = ms[i], a.shape
		case shapeArg:
			fmt.Fprintf(&vars, "    var %s : f64%s @w%s {stop_gradient}\n", a.name, t, m)
		}
		arg := fmt.Sprintf("%s: %s", a.slot, a.name)
		ad := fmt.Sprintf("%s: %s", a.name, m)
		if a.kind == outArg || a.kind == shapeArg {
			outs, outDist = append(outs, arg), append(outDist, ad)
		} else {
			ins, inDist = append(ins, arg), append(inDist, ad)
		}
	}
	attrs := ""
	if c.attrs != "" {
		attrs = " " + c.attrs
	}
	op("%s(%s) -> (%s)%s role forward\n         dist @w impl %s [%s -> %s]",
		c.op, strings.Join(ins, ", "), strings.Join(outs, ", "), attrs, c.impl, strings.Join(inDist, ", "), strings.Join(outDist, ", "))

	// The sink: z, split at most along its dim 0.
	z, zm := "out", out
	rowSink := func(in string, im []int, is []int64) {
		n := len(is)
		ws := ints64(is[n-1], 1)
		wm := []int{im[n-1], -1}
		os := append(slices.Clone(is[:n-1]), 1)
		om := append(slices.Clone(im[:n-1]), -1)
		fmt.Fprintf(&vars, "    param sink.w : f64%s @w%s {trainable}\n", fmtShape(ws), fmtMap(wm))
		fmt.Fprintf(&vars, "    var sink : f64%s @w%s\n", fmtShape(os), fmtMap(om))
		op("matmul_v2(X: %s, Y: sink.w) -> (Out: sink) {trans_x = false, trans_y = false} role forward\n         dist @w impl matmul_v2:1 [%s: %s, sink.w: %s -> sink: %s]",
			in, in, fmtMap(im), fmtMap(wm), fmtMap(om))
		z, zm = "sink", om
	}
	sinkable := true
	switch {
	case len(out) <= 1 || allRepl(out[1:]):
	case out[len(out)-1] >= 0 && allRepl(out[1:len(out)-1]):
		rowSink("out", out, outShape)
	case len(out) == 3 && out[1] >= 0 && out[2] == -1:
		tm := []int{out[0], out[2], out[1]}
		ts := ints64(outShape[0], outShape[2], outShape[1])
		fmt.Fprintf(&vars, "    var sink.t : f64%s @w%s\n", fmtShape(ts), fmtMap(tm))
		fmt.Fprintf(&vars, "    var sink.ts : f64%s @w%s {stop_gradient}\n", fmtShape(append(ints64(0), outShape...)), fmtMap(append([]int{-1}, out...)))
		op("transpose2(X: out) -> (Out: sink.t, XShape: sink.ts) {axis = [0, 2, 1]} role forward\n         dist @w impl transpose2:0 [out: %s -> sink.t: %s, sink.ts: %s]",
			fmtMap(out), fmtMap(tm), fmtMap(append([]int{-1}, out...)))
		rowSink("sink.t", tm, ts)
	default:
		sinkable = false
	}
	var ps []string
	for a := 0; a < mesh.dims; a++ {
		switch {
		case len(zm) > 0 && zm[0] == a:
			ps = append(ps, fmt.Sprintf("%d:avg", a))
		case z == "out" && partialOut == a:
			// The mean of a partial sum is the sum of the parts' means.
			ps = append(ps, fmt.Sprint(a))
		}
	}
	partial := ""
	if len(ps) > 0 {
		partial = " partial [" + strings.Join(ps, ", ") + "]"
	}
	fmt.Fprintf(&vars, "    var loss : f64[] @w[]%s\n", partial)
	op("mean(X: %s) -> (Out: loss) role forward\n         dist @w impl default:0 [%s: %s -> loss: []]", z, z, fmtMap(zm))
	return fmt.Sprintf("%s\nprogram main {\n  block 0 {\n%s%s  }\n}\n", mesh.decl, vars.String(), ops.String()), sinkable
}

func allRepl(m []int) bool {
	for _, x := range m {
		if x != -1 {
			return false
		}
	}
	return true
}

// outIndex returns the index of the op's (first) output among its args.
func (c propCase) outIndex() int {
	for i, a := range c.args {
		if a.kind == outArg {
			return i
		}
	}
	return -1
}

func (c propCase) combo(ms [][]int) string {
	parts := make([]string, len(c.args))
	for i, a := range c.args {
		parts[i] = a.name + "=" + fmtMap(ms[i])
	}
	return strings.Join(parts, " ")
}

type propRow struct {
	name                      string
	tried, accepted, refused  int
	proven, forwardOnly, fail int
}

func TestImplsProperty(t *testing.T) {
	reg := lower.DefaultRegistry()
	var rows []propRow
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, c := range propCases() {
		row := propRow{name: c.name}
		documented := map[string]bool{}
		for _, mesh := range propMeshes {
			var per [][][]int
			for _, a := range c.args {
				per = append(per, mappings(len(a.shape), mesh.dims))
			}
			for _, ms := range product(per) {
				for partial := -1; partial < mesh.dims; partial++ {
					combo := c.combo(ms)
					if partial >= 0 {
						// The output declared partial along a mesh dim its
						// mapping leaves free: no impl here produces one.
						if slices.Contains(ms[c.outIndex()], partial) {
							continue
						}
						combo += fmt.Sprintf(" out partial [%d]", partial)
					}
					must := mesh.dims == 2 && slices.Contains(c.documents, combo)
					if sampled() && !must && rnd.IntN(8) != 0 {
						continue
					}
					row.tried++
					src, sinkable := c.build(mesh, ms, partial)
					m, err := ir.Parse(c.name, []byte(src))
					if err != nil {
						t.Fatalf("%s %s: %v\n%s", c.name, combo, err, src)
					}
					if sinkable {
						if _, err := passes.AppendBackward(m, "loss"); err != nil {
							t.Fatalf("%s %s: append-backward: %v\n%s", c.name, combo, err, src)
						}
					}
					if err := passes.Partition(m.Clone(), reg, 0); err != nil {
						row.refused++
						if must {
							t.Errorf("%s: the documented case %s is refused: %v", c.name, combo, err)
						}
						continue
					}
					row.accepted++
					if must {
						documented[combo] = true
					}
					rep, err := check.Run(context.Background(), m, check.Options{Steps: 1})
					if err == nil {
						err = rep.Err()
					}
					if err != nil {
						row.fail++
						t.Errorf("%s on %s: %s is accepted but not proven: %v\n%s", c.name, mesh.decl, combo, err, ir.Print(m))
						continue
					}
					if sinkable {
						row.proven++
					} else {
						row.forwardOnly++
					}
				}
			}
		}
		for _, d := range c.documents {
			if !documented[d] {
				t.Errorf("%s: the documented case %s was not accepted", c.name, d)
			}
		}
		rows = append(rows, row)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-36s %6s %8s %7s %7s %8s %6s\n", "impl (representative op)", "tried", "accepted", "refused", "proven", "fwd-only", "failed")
	for _, r := range rows {
		fmt.Fprintf(&sb, "%-36s %6d %8d %7d %7d %8d %6d\n", r.name, r.tried, r.accepted, r.refused, r.proven, r.forwardOnly, r.fail)
	}
	t.Logf("\n%s", sb.String())
}

// sampled reports whether the property tests sample their combinations:
// under -short, and under the race detector.
func sampled() bool { return testing.Short() || raceEnabled }

// product returns every choice of one element of each list.
func product(per [][][]int) [][][]int {
	out := [][][]int{{}}
	for _, opts := range per {
		var next [][][]int
		for _, prefix := range out {
			for _, o := range opts {
				next = append(next, append(slices.Clone(prefix), o))
			}
		}
		out = next
	}
	return out
}

// ctxCase is an impl whose args cannot stand alone (the MoE exchanges
// and expert matmuls, whose rows depend on the routing; the AMP flag
// ops): its op is varied in the module it lives in. Each combination
// maps the op's dense args anew, each var's dist and every op's view of
// it together, so that only the impls decide.
type ctxCase struct {
	name string
	mod  func(t *testing.T) *ir.Module
	op   int64
}

func TestImplsPropertyInContext(t *testing.T) {
	moe := func(strategy string, shape []int, dims ...string) func(t *testing.T) *ir.Module {
		return func(t *testing.T) *ir.Module {
			cfg := models.MoEConfig{Tokens: 8, Model: 4, Hidden: 8, Experts: 4, TopK: 2, DType: ir.F64}
			m, err := models.MoETraining(cfg, strategy, models.Mesh(shape, dims), "sgd")
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	golden := func(name string) func(t *testing.T) *ir.Module {
		return func(t *testing.T) *ir.Module { return goldenInput(t, name) }
	}
	var cases []ctxCase
	for _, s := range []struct {
		strategy string
		shape    []int
		dims     []string
	}{{"ep", []int{2}, []string{"ep"}}, {"dp,ep", []int{2, 2}, []string{"dp", "ep"}}} {
		for _, typ := range []string{"alltoall", "global_scatter", "grouped_matmul", "global_gather"} {
			cases = append(cases, ctxCase{name: typ + " (moe " + s.strategy + ")", mod: moe(s.strategy, s.shape, s.dims...), op: -1})
			_ = typ
		}
	}
	cases = append(cases, ctxCase{name: "check_finite_and_unscale (loss_scaling)", mod: golden("loss_scaling"), op: 1})
	reg := lower.DefaultRegistry()
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-42s %6s %8s %7s %7s\n", "impl (op in context)", "tried", "accepted", "refused", "proven")
	for _, c := range cases {
		m := c.mod(t)
		g := m.Main.Global()
		var op *ir.Op
		for _, o := range g.Ops {
			if c.op > 0 && o.ID == c.op || c.op < 0 && strings.HasPrefix(c.name, o.Type+" ") && o.Role.IsForward() {
				op = o
				break
			}
		}
		if op == nil {
			t.Fatalf("%s: no such op", c.name)
		}
		// The op's dense args, each once, and each one's options.
		var names []string
		var per [][][]int
		mesh := m.Mesh(op.Dist.Mesh)
		for _, slots := range [2][]ir.Slot{op.Inputs, op.Outputs} {
			for _, s := range slots {
				for _, a := range s.Args {
					v := g.Var(a)
					if v == nil || v.Type.Kind != ir.DenseTensor || v.Dist == nil || slices.Contains(names, a) || v.Type.Rank() > 3 {
						continue
					}
					var opts [][]int
					for _, dm := range mappings(v.Type.Rank(), len(mesh.Shape)) {
						if !slices.ContainsFunc(v.Dist.Partial, func(p ir.Partial) bool { return slices.Contains(dm, p.Dim) }) {
							opts = append(opts, dm)
						}
					}
					names, per = append(names, a), append(per, opts)
				}
			}
		}
		tried, accepted, refused, proven := 0, 0, 0, 0
		documented := false
		for _, ms := range product(per) {
			mine := true
			cm := m.Clone()
			for i, n := range names {
				if !slices.Equal(ms[i], g.Var(n).Dist.DimsMapping) {
					mine = false
				}
				remap(cm, n, ms[i])
			}
			if sampled() && !mine && tried%4 != 0 {
				tried++
				continue
			}
			tried++
			if err := passes.Partition(cm.Clone(), reg, 0); err != nil {
				refused++
				if mine {
					t.Errorf("%s: the module's own mapping is refused: %v", c.name, err)
				}
				continue
			}
			accepted++
			documented = documented || mine
			rep, err := check.Run(context.Background(), cm, check.Options{Steps: 1})
			if err == nil {
				err = rep.Err()
			}
			if err != nil {
				t.Errorf("%s: %v is accepted but not proven: %v", c.name, ms, err)
				continue
			}
			proven++
		}
		if !documented {
			t.Errorf("%s: the module's own mapping was not accepted", c.name)
		}
		fmt.Fprintf(&sb, "%-42s %6d %8d %7d %7d\n", c.name, tried, accepted, refused, proven)
	}
	t.Logf("\n%s", sb.String())
}

// remap gives var name and its gradient (name@GRAD and its parts) the
// mapping dm, in their dists and in every op's dist that names them, in
// every program of m.
func remap(m *ir.Module, name string, dm []int) {
	is := func(n string) bool { return n == name || strings.HasPrefix(n, name+"@GRAD") }
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			for _, v := range b.Vars() {
				if is(v.Name()) && v.Dist != nil && len(v.Dist.DimsMapping) == len(dm) {
					v.Dist.DimsMapping = slices.Clone(dm)
				}
			}
			for _, op := range b.Ops {
				if op.Dist == nil {
					continue
				}
				for _, ads := range [2][]ir.ArgDist{op.Dist.Inputs, op.Dist.Outputs} {
					for i := range ads {
						if is(ads[i].Name) && len(ads[i].DimsMapping) == len(dm) {
							ads[i].DimsMapping = slices.Clone(dm)
						}
					}
				}
			}
		}
	}
}
