package ops

import "github.com/distpass/distpass/ir"

// optimizerDefs: the parameter updates and the dynamic loss scaling of
// mixed precision. Every *Out has the type of the input it updates
// (programs usually update in place: ParamOut = Param).
func optimizerDefs() []*Def {
	mixed := func(extra ...Attr) []Attr { return append([]Attr{boolAttr("multi_precision", false)}, extra...) }
	return []*Def{
		{
			Type: "sgd", Doc: "ParamOut = Param - LearningRate * Grad",
			Inputs: slots("Param", "LearningRate", "Grad", opt("MasterParam")), Outputs: slots("ParamOut", opt("MasterParamOut")),
			Attrs:    mixed(),
			Shape:    "each *Out = its input; Grad = Param, LearningRate one element",
			Sharding: optimizerRule, ShardingDoc: optimizerDoc,
			Infer: inferOptimizer([]string{"LearningRate"}, []string{"Grad"},
				[][2]string{{"Param", "ParamOut"}, {"MasterParam", "MasterParamOut"}}),
		},
		{
			Type: "momentum", Doc: "VelocityOut = mu * Velocity + Grad; ParamOut = Param - LearningRate * VelocityOut (or Nesterov's)",
			Inputs:  slots("Param", "Grad", "Velocity", "LearningRate", opt("MasterParam")),
			Outputs: slots("ParamOut", "VelocityOut", opt("MasterParamOut")),
			Attrs: mixed(Attr{Name: "mu", Type: ir.KindFloat}, boolAttr("use_nesterov", false),
				stringAttr("regularization_method", "", "", "l2_decay"), floatAttr("regularization_coeff", 0),
				floatAttr("rescale_grad", 1)),
			Shape:    "each *Out = its input; Grad = Velocity = Param, LearningRate one element",
			Sharding: optimizerRule, ShardingDoc: optimizerDoc,
			Infer: inferOptimizer([]string{"LearningRate"}, []string{"Grad", "Velocity"},
				[][2]string{{"Param", "ParamOut"}, {"Velocity", "VelocityOut"}, {"MasterParam", "MasterParamOut"}}),
		},
		{
			Type: "adam", Doc: "Adam: the moments' running averages and a bias-corrected step of Param",
			Inputs: slots("Param", "Grad", "LearningRate", "Moment1", "Moment2", opt("Moment2Max"), "Beta1Pow", "Beta2Pow",
				opt("Beta1Tensor"), opt("Beta2Tensor"), opt("EpsilonTensor"), opt("MasterParam"), opt("SkipUpdate")),
			Outputs: slots("ParamOut", "Moment1Out", "Moment2Out", opt("Moment2MaxOut"), "Beta1PowOut", "Beta2PowOut",
				opt("MasterParamOut")),
			Attrs: mixed(floatAttr("beta1", 0.9), floatAttr("beta2", 0.999), floatAttr("epsilon", 1e-8),
				boolAttr("lazy_mode", false), longAttr("min_row_size_to_use_multithread", 1000),
				boolAttr("use_global_beta_pow", false), boolAttr("amsgrad", false)),
			Shape:    "each *Out = its input; Grad = Moment1 = Moment2 = Param, LearningRate and Beta*Pow one element",
			Sharding: optimizerRule, ShardingDoc: optimizerDoc,
			Infer: inferOptimizer([]string{"LearningRate", "Beta1Pow", "Beta2Pow"}, []string{"Grad", "Moment1", "Moment2"},
				[][2]string{{"Param", "ParamOut"}, {"Moment1", "Moment1Out"}, {"Moment2", "Moment2Out"},
					{"Moment2Max", "Moment2MaxOut"}, {"Beta1Pow", "Beta1PowOut"}, {"Beta2Pow", "Beta2PowOut"},
					{"MasterParam", "MasterParamOut"}}),
		},
		{
			Type: "check_finite_and_unscale", Doc: "each X divided by Scale; FoundInfinite says whether any X held an Inf or a NaN",
			Inputs: slots(many("X"), "Scale"), Outputs: slots(many("Out"), "FoundInfinite"),
			Shape:    "each Out = its X; FoundInfinite bool [1]; Scale one element",
			Traits:   SideEffects | BackwardOnly,
			Sharding: ampRuleOf, ShardingDoc: ampDoc,
			Infer: func(c *Infer) error {
				if err := oneElement(c, "Scale"); err != nil {
					return err
				}
				if err := samePerArg(c, "X", "Out"); err != nil {
					return err
				}
				one := [1]int64{1}
				c.Set("FoundInfinite", ir.Boolean, one[:])
				return nil
			},
		},
		{
			Type: "update_loss_scaling", Doc: "the dynamic loss scale's update after a step; every X zeroed when FoundInfinite",
			Inputs:  slots(many("X"), "FoundInfinite", "PrevLossScaling", "InGoodSteps", "InBadSteps", opt("StopUpdate")),
			Outputs: slots(many("Out"), "LossScaling", "OutGoodSteps", "OutBadSteps"),
			Attrs: []Attr{{Name: "incr_every_n_steps", Type: ir.KindInt}, {Name: "decr_every_n_nan_or_inf", Type: ir.KindInt},
				{Name: "incr_ratio", Type: ir.KindFloat}, {Name: "decr_ratio", Type: ir.KindFloat}, boolAttr("stop_update", false)},
			Shape:    "each Out = its X; LossScaling = PrevLossScaling, OutGoodSteps = InGoodSteps, OutBadSteps = InBadSteps",
			Traits:   SideEffects | BackwardOnly,
			Sharding: ampRuleOf, ShardingDoc: ampDoc,
			Infer: func(c *Infer) error {
				for _, s := range [...]string{"FoundInfinite", "PrevLossScaling", "InGoodSteps", "InBadSteps"} {
					if err := oneElement(c, s); err != nil {
						return err
					}
				}
				if err := samePerArg(c, "X", "Out"); err != nil {
					return err
				}
				for _, p := range [...][2]string{{"PrevLossScaling", "LossScaling"}, {"InGoodSteps", "OutGoodSteps"}, {"InBadSteps", "OutBadSteps"}} {
					if t, ok := c.In(p[0]); ok {
						c.Set(p[1], t.DType, t.Shape)
					}
				}
				return nil
			},
		},
	}
}

// inferOptimizer returns the inference of an optimizer: each slot of
// scalars holds one element, each slot of like has Param's shape, and
// the output of each pair has its input's type.
func inferOptimizer(scalars, like []string, pairs [][2]string) func(c *Infer) error {
	return func(c *Infer) error {
		for _, s := range scalars {
			if err := oneElement(c, s); err != nil {
				return err
			}
		}
		if p, ok := c.In("Param"); ok {
			for _, s := range like {
				if t, ok := c.In(s); ok && !Compatible(p.Shape, t.Shape) {
					return c.Errorf("Param %s %s and %s %s %s: want one shape", c.Name("Param"), ir.FormatShape(p.Shape),
						s, c.Name(s), ir.FormatShape(t.Shape))
				}
			}
		}
		for _, p := range pairs {
			if t, ok := c.In(p[0]); ok && c.NumOut(p[1]) > 0 {
				c.Set(p[1], t.DType, t.Shape)
			}
		}
		return nil
	}
}

// oneElement checks that input slot s, when present, holds one element
// (a 0-D or [1] tensor, or one whose dims are unknown).
func oneElement(c *Infer, s string) error {
	t, ok := c.In(s)
	if !ok {
		return nil
	}
	if n := prod(t.Shape); n != 1 && n != -1 {
		return c.Errorf("%s %s %s: want one element", s, c.Name(s), ir.FormatShape(t.Shape))
	}
	return nil
}

// samePerArg checks that variadic output slot out has as many args as
// input slot in, and gives each the type of its input.
func samePerArg(c *Infer, in, out string) error {
	if n, m := c.NumIn(in), c.NumOut(out); n != m {
		return c.Errorf("%s has %d args and %s %d: want one %s per %s", in, n, out, m, out, in)
	}
	for i := range c.NumIn(in) {
		if t, ok := c.InAt(in, i); ok {
			c.SetAt(out, i, t.DType, t.Shape)
		}
	}
	return nil
}
