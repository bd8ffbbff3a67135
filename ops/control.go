package ops

import (
	"github.com/distpass/distpass/ir"
)

// controlDefs: the ops that run sub-blocks, feed and fetch, and the PIR
// ops the importer reads from Paddle 3's JSON programs (pd_op.*, cf.*).
func controlDefs() []*Def {
	block := Attr{Name: "sub_block", Type: ir.KindBlock}
	skip := stringsAttr("skip_eager_deletion_vars")
	return []*Def{
		// The loop-carried vars a while's body updates are in both X and
		// Out; what they hold after the loop is the body's to say, so
		// nothing is inferred (nor in Paddle).
		{
			Type: "while", Doc: "runs sub_block while Condition, which the block updates, holds",
			Inputs:   slots(optMany("X"), noGrad("Condition")),
			Outputs:  slots(optMany("Out"), "StepScopes"),
			Attrs:    []Attr{block, boolAttr("is_test", false), skip},
			Traits:   ControlFlow,
			Sharding: freeRule, ShardingDoc: controlDoc,
		},
		{
			Type: "conditional_block", Doc: "runs sub_block when Cond holds (is_scalar_condition) or is not empty",
			Inputs:   slots(Slot{Name: "Cond", Variadic: true, NoGrad: true}, optMany("Input")),
			Outputs:  slots(optMany("Out"), "Scope"),
			Attrs:    []Attr{block, boolAttr("is_scalar_condition", false), skip},
			Traits:   ControlFlow,
			Sharding: freeRule, ShardingDoc: controlDoc,
		},
		// feed and fetch move values between the program and its caller:
		// what is fed is the caller's, so feed infers nothing.
		{
			Type: "feed", Doc: "column col of the feed list, into Out",
			Inputs: in("X"), Outputs: in("Out"),
			Attrs:  []Attr{intAttr("col", 0)},
			Traits: SideEffects, Sharding: freeRule, ShardingDoc: freeDoc,
		},
		{
			Type: "fetch", Doc: "X, into column col of the fetch list",
			Inputs: in("X"), Outputs: in("Out"),
			Attrs:  []Attr{intAttr("col", 0)},
			Traits: SideEffects, Sharding: freeRule, ShardingDoc: freeDoc,
		},
		{
			Type: "fetch_v2", Doc: "X, into column col of the fetch list (copied with deepcopy)",
			Inputs: in("X"), Outputs: in("Out"),
			Attrs:  []Attr{intAttr("col", 0), boolAttr("deepcopy", true)},
			Traits: SideEffects, Sharding: freeRule, ShardingDoc: freeDoc,
		},
		// PIR's operands and results are positional: the importer names
		// them in0, in1, ... and out0, out1, ....
		{
			Type: "pd_op.data", Doc: "the program input called name",
			Outputs:  in("out0"),
			Attrs:    []Attr{stringAttr("name", ""), longsAttr("shape", []int64{}...), pirDTypeAttr("dtype", "float32"), stringsAttr("place")},
			Shape:    "out0 = shape, dtype",
			Infer:    inferPIRFull,
			Sharding: freeRule, ShardingDoc: freeDoc,
		},
		// full's value is a float, or in newer files a scalar, which the
		// importer keeps as its JSON: its kind is not checked.
		{
			Type: "pd_op.full", Doc: "a tensor of shape filled with value",
			Outputs:  in("out0"),
			Attrs:    []Attr{longsAttr("shape", []int64{}...), pirDTypeAttr("dtype", "float32"), stringsAttr("place")},
			Shape:    "out0 = shape, dtype",
			Infer:    inferPIRFull,
			Sharding: fillRule("out0"), ShardingDoc: fillDoc,
		},
		{
			Type: "pd_op.scale", Doc: "in0 times the scale in1, plus bias (before or after scaling)",
			Inputs: slots("in0", opt("in1")), Outputs: in("out0"),
			Attrs:    []Attr{floatAttr("bias", 0), boolAttr("bias_after_scale", true)},
			Traits:   Elementwise,
			Shape:    "out0 = in0",
			Infer:    sameAs("in0", "out0"),
			Sharding: unaryOf("in0"), ShardingDoc: unaryDoc,
		},
		{
			Type: "pd_op.equal", Doc: "in0 == in1, elementwise",
			Inputs: in("in0", "in1"), Outputs: in("out0"),
			Traits:   Elementwise,
			Shape:    "out0 = broadcast(in0, in1), bool",
			Sharding: numpyRule("in0", "in1", "out0"), ShardingDoc: numpyDoc,
			Infer: func(c *Infer) error {
				x, okx := c.In("in0")
				y, oky := c.In("in1")
				if !okx || !oky {
					return nil
				}
				out, err := Broadcast(c, x.Shape, y.Shape, -1)
				if err != nil {
					return c.Errorf("in0 %s %s and in1 %s %s: %v", c.Name("in0"), ir.FormatShape(x.Shape), c.Name("in1"), ir.FormatShape(y.Shape), err)
				}
				c.Set("out0", ir.Boolean, out)
				return nil
			},
		},
		{
			Type: "pd_op.thresholded_relu", Doc: "in0 where it is above threshold, value elsewhere",
			Inputs: in("in0"), Outputs: in("out0"),
			Attrs:    []Attr{floatAttr("threshold", 1), floatAttr("value", 0)},
			Traits:   Elementwise,
			Shape:    "out0 = in0",
			Infer:    sameAs("in0", "out0"),
			Sharding: unaryOf("in0"), ShardingDoc: unaryDoc,
		},
		{
			Type: "pd_op.fetch", Doc: "in0, fetched as column col under name",
			Inputs: in("in0"), Outputs: in("out0"),
			Attrs:    []Attr{intAttr("col", 0), stringAttr("name", "")},
			Shape:    "out0 = in0",
			Sharding: freeRule, ShardingDoc: freeDoc,
			Infer: sameAs("in0", "out0"),
		},
		// The results of an if are what its regions' cf.yield give, which
		// the op itself does not say.
		{
			Type: "pd_op.if", Doc: "runs the first of sub_blocks when in0 holds, else the second; its results are their yields",
			Inputs: in("in0"), Outputs: positional("out", true),
			Attrs:    []Attr{{Name: "sub_blocks", Type: ir.KindBlocks}},
			Traits:   ControlFlow,
			Sharding: freeRule, ShardingDoc: controlDoc,
		},
		{
			Type: "cf.yield", Doc: "ends a region, giving its operands as the results of the op owning the region",
			Inputs:   positional("in", true),
			Sharding: freeRule, ShardingDoc: controlDoc,
		},
	}
}

// positional returns the numbered slots prefix0, prefix1, ..., optional
// when opt.
func positional(prefix string, opt bool) []Slot {
	return []Slot{{Name: prefix, Numbered: true, Optional: opt}}
}

// pirDTypes maps PIR's dtype names to the IR's.
var pirDTypes = map[string]ir.DType{
	"bool": ir.Boolean, "uint8": ir.U8, "int8": ir.I8, "int16": ir.I16, "int32": ir.I32, "int64": ir.I64,
	"float16": ir.F16, "bfloat16": ir.BF16, "float32": ir.F32, "float64": ir.F64,
}

// inferPIRFull infers pd_op.full and pd_op.data: attr shape, and attr
// dtype by its PIR name (unchecked when the IR has no such dtype).
func inferPIRFull(c *Infer) error {
	shape, _ := c.Ints("shape")
	for i, d := range shape {
		if d < -1 {
			return c.Errorf("attr shape %s: dim %d is %d", ir.FormatShape(shape), i, d)
		}
	}
	c.Set("out0", pirDTypes[c.String("dtype")], shape)
	return nil
}
