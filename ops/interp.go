package ops

import (
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/spmd"
)

// interpDefs: the 2-D resizes of Paddle's interpolate (bilinear, nearest,
// the _v2 ops every exporter since Paddle 2.0 writes), and clip.
func interpDefs() []*Def {
	interp := func(t, doc string) *Def {
		return &Def{
			Type: t, Doc: doc,
			Inputs: slots("X", Slot{Name: "OutSize", Optional: true, NoGrad: true},
				Slot{Name: "SizeTensor", Optional: true, Variadic: true, NoGrad: true}, Slot{Name: "Scale", Optional: true, NoGrad: true}),
			Outputs: in("Out"),
			Attrs: []Attr{
				stringAttr("data_layout", "NCHW", "NCHW", "NHWC", "AnyLayout"),
				intAttr("out_d", -1), intAttr("out_h", -1), intAttr("out_w", -1),
				floatsAttr("scale"),
				stringAttr("interp_method", "bilinear"),
				boolAttr("align_corners", true), intAttr("align_mode", 1),
			},
			Shape:       "Out = X with H, W the out size: OutSize, SizeTensor, X's times scale, or out_h and out_w",
			Infer:       inferInterp,
			Sharding:    interpRule,
			ShardingDoc: interpDoc,
			Grad: &Grad{Reads: []string{"X", "OutSize", "SizeTensor", "Scale", "Out@GRAD"}, Diff: []string{"X"},
				Unsupported: func(fwd *ir.Op) string {
					if len(fwd.Input("OutSize"))+len(fwd.Input("SizeTensor"))+len(fwd.Input("Scale")) > 0 {
						return "a size from OutSize, SizeTensor or Scale is not supported (make-trainable{shape=} folds one it can prove)"
					}
					return ""
				}},
		}
	}
	return []*Def{
		interp("bilinear_interp_v2", "X resized over H and W by bilinear interpolation"),
		interp("nearest_interp_v2", "X resized over H and W to the nearest source pixel"),
		{
			Type: "clip", Doc: "X clamped to [min, max]",
			Inputs:  slots("X", Slot{Name: "Min", Optional: true, NoGrad: true}, Slot{Name: "Max", Optional: true, NoGrad: true}),
			Outputs: in("Out"), Traits: Elementwise | Monotone,
			Attrs:    []Attr{floatAttr("min", -3.4028234663852886e+38), floatAttr("max", 3.4028234663852886e+38)},
			Shape:    "Out = X",
			Infer:    sameAs("X", "Out"),
			Sharding: unaryRule, ShardingDoc: unaryDoc,
			Grad: &Grad{Reads: []string{"X", "Min", "Max", "Out@GRAD"}, Diff: []string{"X"}},
		},
	}
}

const interpDoc = "like a pool: the batch and channels pass through, H and W (resized) are not sharded"

// interpRule: each output pixel reads its source's neighbours in X:
// the batch and channel dims pass through, the resized dims are whole.
func interpRule(c *Infer) (spmd.ShardingRule, error) {
	if c.rank("X") != 4 {
		return nil, nil
	}
	x := "nc11"
	if c.channelLast("data_layout") {
		x = "n11c"
	}
	return c.einsum(map[string]string{"X": x}, map[string]string{"Out": x})
}

// InterpSize returns the H and W a 2-D interp op resizes X [N, C, H, W]
// (or NHWC) to from its attrs alone, as Paddle reads them: a positive
// scale (one value for both, or H's and W's) times X's, else out_h and
// out_w; ok is false when tensors give the size (OutSize, SizeTensor,
// Scale) or the attrs give none.
func InterpSize(op *ir.Op, h, w int64) (oh, ow int64, ok bool) {
	if len(op.Input("OutSize"))+len(op.Input("SizeTensor"))+len(op.Input("Scale")) > 0 {
		return 0, 0, false
	}
	if s, _ := op.Attrs.Get("scale").(ir.Floats); len(s) > 0 {
		sh, sw := s[0], s[0]
		if len(s) > 1 {
			sw = s[1]
		}
		if sh > 0 && sw > 0 && h >= 0 && w >= 0 {
			return int64(float64(h) * sh), int64(float64(w) * sw), true
		}
	}
	oh, okh := ir.AsInt(op.Attrs.Get("out_h"))
	ow, okw := ir.AsInt(op.Attrs.Get("out_w"))
	return oh, ow, okh && okw && oh > 0 && ow > 0
}

func inferInterp(c *Infer) error {
	x, ok := c.In("X")
	if !ok {
		return nil
	}
	if len(x.Shape) != 4 {
		return c.Errorf("X %s %s: a 2-D interp reads [N, C, H, W] (or NHWC)", c.Name("X"), ir.FormatShape(x.Shape))
	}
	if m := c.String("interp_method"); m != "bilinear" && m != "nearest" {
		return c.Errorf("interp_method %q: bilinear or nearest", m)
	}
	hi, wi := 2, 3
	if c.channelLast("data_layout") {
		hi, wi = 1, 2
	}
	out := c.Shape(4)
	copy(out, x.Shape)
	oh, ow, ok := InterpSize(c.op, x.Shape[hi], x.Shape[wi])
	if !ok {
		oh, ow = -1, -1
	}
	out[hi], out[wi] = oh, ow
	c.Set("Out", x.DType, out)
	return nil
}
