package ops_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/interop/paddle"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/passes"
)

// visionOps are the op types whose inference the Paddle programs prove.
var visionOps = []string{"conv2d", "depthwise_conv2d", "pool2d", "batch_norm"}

// paddlePrograms imports every Paddle ProgramDesc of the import testdata
// and the shared fixtures.
func paddlePrograms(t *testing.T) map[string]*ir.Module {
	t.Helper()
	var files []string
	for _, g := range []string{"../interop/paddle/testdata/*.pdmodel", "../../shared/fixtures/paddle/*.pdmodel"} {
		fs, _ := filepath.Glob(g)
		files = append(files, fs...)
	}
	ms := map[string]*ir.Module{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := paddle.Import(f, data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		ms[f] = m
	}
	return ms
}

// The programs Paddle wrote declare every output's shape as Paddle's own
// InferShape computed it: for every conv2d, depthwise_conv2d, pool2d and
// batch_norm op of them, inference gives exactly the declared dtypes and
// shapes (not just compatible ones: -1 where Paddle wrote -1).
func TestPaddleVisionOpsInferDeclared(t *testing.T) {
	counts := map[string]int{}
	local := map[string]int{} // counted in interop/paddle/testdata only
	ms := paddlePrograms(t)
	for _, f := range slices.Sorted(mapKeys(ms)) {
		p := ms[f].Main
		for _, b := range p.Blocks {
			for _, op := range b.Ops {
				if !slices.Contains(visionOps, op.Type) {
					continue
				}
				lookup := func(n string) *ir.Var { return p.LookupVar(b, n) }
				outs, err := ops.InferOp(op, lookup)
				if err != nil {
					t.Errorf("%s: %v", f, err)
					continue
				}
				if len(outs) == 0 {
					t.Errorf("%s: %s: inference set no output", f, op)
				}
				for _, o := range outs {
					v := lookup(op.Output(o.Slot)[o.Index])
					if v.Type.DType != o.Type.DType || !slices.Equal(v.Type.Shape, o.Type.Shape) {
						t.Errorf("%s: %s: %s %s declared %s, inferred %s", f, op, o.Slot, v.Name(), v.Type, o.Type)
					}
				}
				counts[op.Type]++
				if strings.Contains(f, "interop/paddle/testdata") {
					local[op.Type]++
				}
			}
		}
	}
	t.Logf("ops checked against Paddle's declared shapes: %v", counts)
	// The import testdata's eight programs hold these; a fixture dropped
	// or an op skipped shows here.
	want := map[string]int{"conv2d": 181, "depthwise_conv2d": 43, "pool2d": 7, "batch_norm": 158}
	for _, typ := range visionOps {
		if local[typ] != want[typ] {
			t.Errorf("%s: %d ops checked in interop/paddle/testdata, want %d", typ, local[typ], want[typ])
		}
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// The same programs made data parallel and partitioned verify for every
// rank with local shapes.
func TestPaddleProgramsVerifyPartitioned(t *testing.T) {
	// Refused as data parallel, as interop/paddle's tests show why.
	refused := []string{"demo_custom_gap.pdmodel", "lite_mobilenetv2.pdmodel"}
	checked := 0
	for f, m := range paddlePrograms(t) {
		if !strings.Contains(f, "interop/paddle/testdata") {
			continue
		}
		if err := passes.AnnotateDataParallel(m, "", 2, "dp"); err != nil {
			if slices.Contains(refused, filepath.Base(f)) {
				continue
			}
			t.Fatalf("%s: %v", f, err)
		}
		mods, err := passes.PartitionAll(context.Background(), m, nil)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for r, pm := range mods {
			st, err := ops.Verify(pm, ops.Options{})
			if err != nil {
				t.Errorf("%s rank %d:\n%v", f, r, err)
			}
			if st.Defined == 0 {
				t.Errorf("%s rank %d: no op checked", f, r)
			}
			checked++
		}
	}
	if checked != 12 {
		t.Errorf("%d per-rank programs checked, want 12 (6 programs, 2 ranks)", checked)
	}
}

// visionCase is one op in a program whose declared output shapes were
// computed by hand from Paddle's formulas; err, when set, is the end of
// the first violation Verify must report instead.
type visionCase struct {
	name, src, err string
}

func prog(body string) string { return "program main { block 0 {\n" + body + "\n}}" }

// conv declares x, w and o with the given shapes and runs typ on them.
func conv(typ, x, w, o, attrs string) string {
	return prog(" var x : f32" + x + "\n persist w : f32" + w + "\n var o : f32" + o +
		"\n op 1 " + typ + "(Input: x, Filter: w) -> (Output: o) {" + attrs + "}")
}

func pool(x, o, attrs string) string {
	return prog(" var x : f32" + x + "\n var o : f32" + o + "\n op 1 pool2d(X: x) -> (Out: o) {" + attrs + "}")
}

// bn declares batch_norm of x over c channels, statistics of shape st.
func bn(dt, x, st, saved, attrs string) string {
	return prog(" var x : " + dt + x + "\n persist s : f32" + st + "\n persist b : f32" + st +
		"\n persist m : f32" + st + "\n persist v : f32" + st + "\n var y : " + dt + x +
		"\n var sm : " + saved + "\n var sv : " + saved +
		"\n op 1 batch_norm(X: x, Scale: s, Bias: b, Mean: m, Variance: v) -> (Y: y, MeanOut: m, VarianceOut: v, SavedMean: sm, SavedVariance: sv) {" + attrs + "}")
}

func visionCases() []visionCase {
	return []visionCase{
		// conv2d: out = (in + pads - (dilation*(k-1)+1)) / stride + 1.
		{"conv/explicit", conv("conv2d", "[2, 3, 32, 32]", "[8, 3, 5, 5]", "[2, 8, 15, 15]", `strides = [2, 2], paddings = [1, 1]`), ""}, // (32+2-5)/2+1
		{"conv/four-paddings", conv("conv2d", "[1, 3, 10, 12]", "[4, 3, 3, 3]", "[1, 4, 9, 15]", `paddings = [0, 1, 2, 3]`), ""},         // 10+1-3+1, 12+5-3+1
		{"conv/dilations", conv("conv2d", "[1, 3, 20, 20]", "[6, 3, 3, 3]", "[1, 6, 16, 14]", `dilations = [2, 3]`), ""},                 // kernels 5 and 7
		// SAME: ceil(in / stride), dilations ignored: with dilation 2 H would be 3.
		{"conv/same", conv("conv2d", "[1, 3, 7, 8]", "[4, 3, 3, 3]", "[1, 4, 4, 3]", `strides = [2, 3], dilations = [2, 2], padding_algorithm = "SAME"`), ""},
		// VALID: the paddings attr is ignored.
		{"conv/valid", conv("conv2d", "[1, 3, 7, 7]", "[4, 3, 3, 3]", "[1, 4, 3, 3]", `strides = [2, 2], paddings = [5, 5], padding_algorithm = "VALID"`), ""},
		{"conv/groups", conv("conv2d", "[2, 6, 9, 9]", "[12, 2, 3, 3]", "[2, 12, 9, 9]", `groups = 3, paddings = [1, 1]`), ""},
		{"conv/nhwc", conv("conv2d", "[2, 9, 9, 6]", "[12, 2, 3, 3]", "[2, 4, 4, 12]", `groups = 3, strides = [2, 2], data_format = "NHWC"`), ""},
		{"conv/anylayout-is-nchw", conv("conv2d", "[2, 6, 9, 9]", "[4, 6, 3, 3]", "[2, 4, 7, 7]", `data_format = "AnyLayout"`), ""},
		{"conv/unknown-dims", conv("conv2d", "[-1, 3, -1, 10]", "[4, 3, 3, 3]", "[-1, 4, -1, 8]", ``), ""},
		{"depthwise", conv("depthwise_conv2d", "[-1, 8, 14, 14]", "[16, 1, 3, 3]", "[-1, 16, 7, 7]", `groups = 8, strides = [2, 2], paddings = [1, 1]`), ""},
		{"conv/bias-and-residual", prog(" var x : f32[1, 3, 8, 8]\n persist w : f32[4, 3, 3, 3]\n persist bias : f32[4]\n var r : f32[1, 4, 6, 6]\n var o : f32[1, 4, 6, 6]\n op 1 conv2d(Input: x, Filter: w, Bias: bias, ResidualData: r) -> (Output: o)"), ""},

		// pool2d: out = (in + pads - k) / stride + 1, + stride - 1 inside with ceil_mode.
		{"pool/max", pool("[1, 64, 112, 112]", "[1, 64, 56, 56]", `pooling_type = "max", ksize = [3, 3], strides = [2, 2], paddings = [1, 1]`), ""},
		{"pool/floor", pool("[1, 3, 7, 7]", "[1, 3, 3, 3]", `pooling_type = "avg", ksize = [2, 2], strides = [2, 2]`), ""},
		{"pool/ceil-mode", pool("[1, 3, 7, 7]", "[1, 3, 4, 4]", `pooling_type = "avg", ksize = [2, 2], strides = [2, 2], ceil_mode = true`), ""},
		{"pool/four-paddings", pool("[1, 1, 7, 7]", "[1, 1, 3, 3]", `pooling_type = "max", ksize = [3, 3], strides = [2, 2], paddings = [0, 1, 1, 0]`), ""},
		{"pool/four-paddings-ceil", pool("[1, 1, 7, 7]", "[1, 1, 4, 4]", `pooling_type = "max", ksize = [3, 3], strides = [2, 2], paddings = [0, 1, 1, 0], ceil_mode = true`), ""},
		{"pool/adaptive", pool("[1, 3, 13, 17]", "[1, 3, 3, 4]", `pooling_type = "avg", ksize = [3, 4], adaptive = true, paddings = [2, 2]`), ""},
		{"pool/global-ignores-strides", pool("[2, 5, 3, 7]", "[2, 5, 1, 1]", `pooling_type = "max", ksize = [1, 1], strides = [0, 0], global_pooling = true`), ""},
		{"pool/global", pool("[2, 5, -1, 7]", "[2, 5, 1, 1]", `pooling_type = "avg", ksize = [0, 0], global_pooling = true`), ""},
		// Global and adaptive: Paddle sets the bins to the input's dims.
		{"pool/global-adaptive", pool("[1, 3, 5, 6]", "[1, 3, 5, 6]", `pooling_type = "avg", ksize = [2, 2], global_pooling = true, adaptive = true`), ""},
		{"pool/same", pool("[1, 3, 7, 8]", "[1, 3, 4, 3]", `pooling_type = "max", ksize = [3, 3], strides = [2, 3], padding_algorithm = "SAME"`), ""},
		{"pool/valid", pool("[1, 3, 7, 7]", "[1, 3, 3, 3]", `pooling_type = "max", ksize = [3, 3], strides = [2, 2], paddings = [1, 1], padding_algorithm = "VALID"`), ""},
		{"pool/nhwc", pool("[1, 9, 9, 4]", "[1, 3, 3, 4]", `pooling_type = "max", ksize = [3, 3], strides = [3, 3], data_format = "NHWC"`), ""},
		{"pool/unknown", pool("[-1, 3, -1, 9]", "[-1, 3, -1, 4]", `pooling_type = "max", ksize = [3, 3], strides = [2, 2]`), ""},

		{"bn/nchw", bn("f32", "[-1, 16, 8, 8]", "[16]", "f32[16]", `epsilon = 0.00001`), ""},
		{"bn/nhwc", bn("f32", "[4, 8, 8, 16]", "[16]", "f32[16]", `data_layout = "NHWC"`), ""},
		{"bn/2d", bn("f32", "[4, 10]", "[10]", "f32[10]", ``), ""},
		// Half-precision input: Paddle keeps the saved statistics in f32.
		{"bn/f16", bn("f16", "[2, 4, 3, 3]", "[4]", "f32[4]", ``), ""},

		{"affine/anylayout-is-channel-last", prog(" var x : f32[2, 3, 4, 5]\n persist s : f32[5]\n persist b : f32[5]\n var o : f32[2, 3, 4, 5]\n op 1 affine_channel(X: x, Scale: s, Bias: b) -> (Out: o)"), ""},
		{"affine/nchw", prog(" var x : f32[2, 3, 4, 5]\n persist s : f32[3]\n persist b : f32[3]\n var o : f32[2, 3, 4, 5]\n op 1 affine_channel(X: x, Scale: s, Bias: b) -> (Out: o) {data_layout = \"NCHW\"}"), ""},

		// Errors: each names the vars and both shapes.
		{"conv/channels", conv("conv2d", "[1, 3, 8, 8]", "[4, 2, 3, 3]", "[1, 4, 6, 6]", ``),
			"Input x [1, 3, 8, 8] and Filter w [4, 2, 3, 3]: input channels 3 are not filter channels 2 times groups 1 (data_format NCHW)"},
		{"conv/channels-nhwc", conv("conv2d", "[1, 8, 8, 3]", "[4, 3, 3, 3]", "[1, 6, 6, 4]", `groups = 3, data_format = "NHWC"`),
			"Input x [1, 8, 8, 3] and Filter w [4, 3, 3, 3]: input channels 3 are not filter channels 3 times groups 3 (data_format NHWC)"},
		{"conv/groups", conv("conv2d", "[1, 3, 8, 8]", "[5, 1, 3, 3]", "[1, 5, 6, 6]", `groups = 3`),
			"Filter w [5, 1, 3, 3]: output channels 5 are not a positive multiple of groups 3"},
		{"depthwise/filter-channels", conv("depthwise_conv2d", "[1, 8, 8, 8]", "[16, 2, 3, 3]", "[1, 16, 6, 6]", `groups = 4`),
			"Input x [1, 8, 8, 8] and Filter w [16, 2, 3, 3]: depthwise_conv2d takes one filter channel per group (groups = input channels), not 2"},
		{"conv/too-small", conv("conv2d", "[1, 3, 2, 8]", "[4, 3, 3, 3]", "[1, 4, 1, 6]", ``),
			"Input x [1, 3, 2, 8] and Filter w [4, 3, 3, 3]: dim 2 of size 2, padded by 0+0, is smaller than the dilated filter 3"},
		{"conv/rank", conv("conv2d", "[3, 8, 8]", "[4, 3, 3, 3]", "[4, 6, 6]", ``),
			"Input x [3, 8, 8] and Filter w [4, 3, 3, 3]: a 2-D convolution takes a 4-D input and filter"},
		{"conv/strides-len", conv("conv2d", "[1, 3, 8, 8]", "[4, 3, 3, 3]", "[1, 4, 6, 6]", `strides = [1, 1, 1]`),
			"attr strides [1, 1, 1] has 3 values; a 2-D op takes 2"},
		{"conv/stride-zero", conv("conv2d", "[1, 3, 8, 8]", "[4, 3, 3, 3]", "[1, 4, 6, 6]", `strides = [1, 0]`),
			"attrs strides [1, 0] and dilations [1, 1] must be positive"},
		{"conv/paddings-len", conv("conv2d", "[1, 3, 8, 8]", "[4, 3, 3, 3]", "[1, 4, 6, 6]", `paddings = [1, 1, 1]`),
			"attr paddings [1, 1, 1] has 3 values; a 2-D op takes 2 or 4"},
		{"conv/negative-padding", conv("conv2d", "[1, 3, 8, 8]", "[4, 3, 3, 3]", "[1, 4, 6, 6]", `paddings = [-1, 0]`),
			"attr paddings [-1, 0] has a negative value"},
		{"conv/bias", prog(" var x : f32[1, 3, 8, 8]\n persist w : f32[4, 3, 3, 3]\n persist bias : f32[5]\n var o : f32[1, 4, 6, 6]\n op 1 conv2d(Input: x, Filter: w, Bias: bias) -> (Output: o)"),
			"Bias bias [5] and Filter w [4, 3, 3, 3]: Bias must be [4], one value per output channel"},
		{"conv/residual", prog(" var x : f32[1, 3, 8, 8]\n persist w : f32[4, 3, 3, 3]\n var r : f32[1, 4, 8, 8]\n var o : f32[1, 4, 6, 6]\n op 1 conv2d(Input: x, Filter: w, ResidualData: r) -> (Output: o)"),
			"ResidualData r [1, 4, 8, 8]: the residual added to the output must have its shape [1, 4, 6, 6]"},
		{"conv/declared", conv("conv2d", "[2, 3, 32, 32]", "[8, 3, 5, 5]", "[2, 8, 16, 16]", `strides = [2, 2], paddings = [1, 1]`),
			"output Output o: declared f32[2, 8, 16, 16], inferred [2, 8, 15, 15] from Input f32[2, 3, 32, 32], Filter f32[8, 3, 5, 5]"},
		{"conv/padding-algorithm", conv("conv2d", "[1, 3, 8, 8]", "[4, 3, 3, 3]", "[1, 4, 6, 6]", `padding_algorithm = "FULL"`),
			`attr padding_algorithm = "FULL" is not one of ["EXPLICIT", "SAME", "VALID"]`},
		{"conv/data-format", conv("conv2d", "[1, 3, 8, 8]", "[4, 3, 3, 3]", "[1, 4, 6, 6]", `data_format = "NDHWC"`),
			`attr data_format = "NDHWC" is not one of ["NCHW", "NHWC", "AnyLayout"]`},

		{"pool/ksize-missing", pool("[1, 3, 8, 8]", "[1, 3, 4, 4]", `pooling_type = "max"`), "attr ksize is missing"},
		{"pool/ksize-len", pool("[1, 3, 8, 8]", "[1, 3, 4, 4]", `pooling_type = "max", ksize = [2, 2, 2]`), "attr ksize [2, 2, 2] has 3 values; a 2-D op takes 2"},
		{"pool/rank", pool("[3, 8, 8]", "[3, 4, 4]", `pooling_type = "max", ksize = [2, 2]`), "X x [3, 8, 8]: pool2d takes a 4-D input"},
		{"pool/window", pool("[1, 3, 2, 8]", "[1, 3, 1, 3]", `pooling_type = "max", ksize = [3, 3], strides = [2, 2]`),
			"X x [1, 3, 2, 8]: dim 2 of size 2, padded by 0+0, is smaller than the window 3"},
		{"pool/stride-zero", pool("[1, 3, 8, 8]", "[1, 3, 4, 4]", `pooling_type = "max", ksize = [2, 2], strides = [2, 0], padding_algorithm = "SAME"`), "attr strides [2, 0] must be positive"},
		{"pool/ksize-zero", pool("[1, 3, 8, 8]", "[1, 3, 4, 4]", `pooling_type = "max", ksize = [0, 2]`), "attr ksize [0, 2] must be positive"},
		{"pool/type", pool("[1, 3, 8, 8]", "[1, 3, 4, 4]", `pooling_type = "sum", ksize = [2, 2], strides = [2, 2]`),
			`attr pooling_type = "sum" is not one of ["max", "avg"]`},
		{"pool/declared", pool("[1, 3, 7, 7]", "[1, 3, 3, 3]", `pooling_type = "avg", ksize = [2, 2], strides = [2, 2], ceil_mode = true`),
			"output Out o: declared f32[1, 3, 3, 3], inferred [1, 3, 4, 4] from X f32[1, 3, 7, 7]"},

		{"bn/scale", prog(" var x : f32[2, 16, 4, 4]\n persist s : f32[8]\n persist b : f32[16]\n persist m : f32[16]\n persist v : f32[16]\n var y : f32[2, 16, 4, 4]\n var sm : f32[16]\n var sv : f32[16]\n op 1 batch_norm(X: x, Scale: s, Bias: b, Mean: m, Variance: v) -> (Y: y, MeanOut: m, VarianceOut: v, SavedMean: sm, SavedVariance: sv)"),
			"Scale s [8] and X x [2, 16, 4, 4]: Scale must be [16], one value per channel"},
		{"bn/nhwc-channels", bn("f32", "[2, 4, 4, 16]", "[4]", "f32[4]", `data_layout = "NHWC"`),
			"Scale s [4] and X x [2, 4, 4, 16]: Scale must be [16], one value per channel"},
		{"bn/rank", bn("f32", "[16]", "[16]", "f32[16]", ``), "X x [16]: batch_norm takes a 2-D to 5-D input"},
		{"bn/layout", bn("f32", "[2, 16, 4, 4]", "[16]", "f32[16]", `data_layout = "AnyLayout"`), `attr data_layout = "AnyLayout" is not one of ["NCHW", "NHWC"]`},
		{"bn/saved-dtype", bn("f16", "[2, 4, 3, 3]", "[4]", "f16[4]", ``),
			"output SavedMean sm: declared f16[4], inferred dtype f32 from X f16[2, 4, 3, 3], Scale f32[4], Bias f32[4], Mean f32[4], ..."},
		{"affine/bias", prog(" var x : f32[2, 3, 4, 5]\n persist s : f32[5]\n persist b : f32[3]\n var o : f32[2, 3, 4, 5]\n op 1 affine_channel(X: x, Scale: s, Bias: b) -> (Out: o)"),
			"Bias b [3] and X x [2, 3, 4, 5]: Bias must be [5], one value per channel"},
	}
}

// checkCases verifies each case's program: a case without err verifies
// clean and inference gives exactly its declared output types; one with
// err gets that violation first, and only violations of its op. A dtype
// inference leaves open (dequantize_linear's of an int8 input) is not
// compared; a scalar is declared [] or [1].
func checkCases(t *testing.T, cases []visionCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := ir.Parse(c.name, []byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			if err := ir.Verify(m); err != nil {
				t.Fatalf("ir.Verify: %v", err)
			}
			_, err = ops.Verify(m, ops.Options{})
			b := m.Main.Global()
			op := b.Ops[0]
			if c.err != "" {
				prefix := "main block 0: " + op.String() + ": "
				if err == nil {
					t.Fatalf("no violation, want %s...%s", prefix, c.err)
				}
				lines := strings.Split(err.Error(), "\n")
				for _, l := range lines {
					if !strings.HasPrefix(l, prefix) {
						t.Errorf("violation %q is not of %s", l, op)
					}
				}
				if !strings.HasSuffix(lines[0], c.err) {
					t.Errorf("got %v\nwant first %s...%s", err, prefix, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			outs, err := ops.InferOp(op, b.Var)
			if err != nil || len(outs) == 0 {
				t.Fatalf("InferOp: %v, %d outputs", err, len(outs))
			}
			for _, o := range outs {
				v := b.Var(op.Output(o.Slot)[o.Index])
				shapeOK := slices.Equal(v.Type.Shape, o.Type.Shape) ||
					o.Scalar && (len(v.Type.Shape) == 0 || slices.Equal(v.Type.Shape, []int64{1}))
				if o.Type.DType != ir.DTypeInvalid && v.Type.DType != o.Type.DType || !shapeOK {
					t.Errorf("%s %s: declared %s, inferred %s", o.Slot, v.Name(), v.Type, o.Type)
				}
			}
		})
	}
}

func TestVisionInfer(t *testing.T) { checkCases(t, visionCases()) }
