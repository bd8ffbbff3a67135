package passes

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/distpass/distpass/ir"
)

// The hyper-parameters append-optimizer writes into its ops. They are the
// defaults of the simulator's kernels, spelled out so that the program
// says what it computes.
const (
	adamBeta1   = 0.9
	adamBeta2   = 0.999
	adamEpsilon = 1e-8
	momentumMu  = 0.9
)

// LearningRateVar is the persistable that append-optimizer creates and
// every optimizer op reads.
const LearningRateVar = "learning_rate_0"

// AppendOptimizerPass appends one optimizer op per (param, grad) pair of
// the module's params-grads list.
func AppendOptimizerPass() *Pass {
	return &Pass{
		Name: "append-optimizer",
		Doc: `append an optimizer op for each (param, grad) of the params-grads list
For each pair, in params-grads order, appends to main's block 0 an op of
the chosen type (sgd, momentum or adam) with role optimize that updates
the param in place (ParamOut = Param), and its state in place. A
persistable learning_rate_0 ([1], f64 when every param is f64, f32
otherwise) is shared by all; momentum keeps <p>_velocity_0, adam
<p>_moment1_0, <p>_moment2_0, <p>_beta1_pow_acc_0 and <p>_beta2_pow_acc_0
(beta1 0.9, beta2 0.999, epsilon 1e-8; momentum mu 0.9). Each is declared
in main and in the startup program, where a fill_constant initialises it
(lr to the option, moments and velocity to 0, beta pows to beta). When a
param has a tensor dist, its moments and velocity take the same dist,
the [1] vars a replicated one on its mesh, and the op gets impl
default:0 with every argument's mapping from its var. A pair without a
grad is skipped. An empty params-grads list is an error. The learning
rate is finite and above 0: 0 would train nothing (and check would
compare updates that change nothing), a negative one climbs the loss.
Counts optimizer-ops.`,
		Options: []Option{
			{Name: "type", Kind: OptString, Default: "sgd", Doc: "the optimizer",
				Values: []string{"sgd", "momentum", "adam"}},
			{Name: "lr", Kind: OptFloat, Default: "0.01", Doc: "the learning rate",
				Range: &Range{Min: 0, Max: math.MaxFloat64, MinOpen: true}},
		},
		Run: func(ctx *Context, m *ir.Module) error {
			n, err := AppendOptimizer(m, ctx.String("type"), ctx.Float("lr"))
			ctx.Count("optimizer-ops", n)
			return err
		},
	}
}

// optimizerState describes one state var of an optimizer: its name suffix,
// its input and output slots, whether it is a [1] scalar (else it has the
// param's shape), and its initial value.
type optimizerState struct {
	suffix, in, out string
	scalar          bool
	init            float64
}

var optimizerStates = map[string][]optimizerState{
	"sgd": nil,
	"momentum": {
		{suffix: "_velocity_0", in: "Velocity", out: "VelocityOut"},
	},
	"adam": {
		{suffix: "_moment1_0", in: "Moment1", out: "Moment1Out"},
		{suffix: "_moment2_0", in: "Moment2", out: "Moment2Out"},
		{suffix: "_beta1_pow_acc_0", in: "Beta1Pow", out: "Beta1PowOut", scalar: true, init: adamBeta1},
		{suffix: "_beta2_pow_acc_0", in: "Beta2Pow", out: "Beta2PowOut", scalar: true, init: adamBeta2},
	},
}

// AppendOptimizer is append-optimizer's work: it changes m in place and
// returns the number of optimizer ops appended. On error m may be
// partly changed only when the error comes from the builder (a name
// collision is checked before anything is added).
func AppendOptimizer(m *ir.Module, typ string, lr float64) (int, error) {
	states, ok := optimizerStates[typ]
	if !ok {
		return 0, fmt.Errorf("unknown optimizer type %q (want sgd, momentum or adam)", typ)
	}
	if !(lr > 0) || math.IsInf(lr, 1) {
		return 0, fmt.Errorf("learning rate %v: want a finite number above 0", lr)
	}
	if len(m.ParamGrads) == 0 {
		return 0, errors.New("no params-grads: run append-backward first")
	}
	if m.Main == nil {
		return 0, errors.New("no main program")
	}
	g := m.Main.Global()

	// Check everything first, so that a bad module is left as it was.
	type pair struct {
		p    *ir.Var
		grad string
	}
	var pairs []pair
	var errs []error
	lrDType := ir.F64
	var lrDist *ir.TensorDist
	taken := func(name string) bool {
		return g.Var(name) != nil || (m.Startup != nil && m.Startup.Global().Var(name) != nil)
	}
	if taken(LearningRateVar) {
		errs = append(errs, fmt.Errorf("var %s already declared", LearningRateVar))
	}
	for _, pg := range m.ParamGrads {
		if pg.Grad == "" {
			continue
		}
		p := g.Var(pg.Param)
		if p == nil {
			errs = append(errs, fmt.Errorf("param %s is not declared in main block 0", pg.Param))
			continue
		}
		if !p.Type.IsTensor() {
			errs = append(errs, fmt.Errorf("param %s has type %s, not a dense tensor", pg.Param, p.Type))
			continue
		}
		if g.Var(pg.Grad) == nil {
			errs = append(errs, fmt.Errorf("grad %s of param %s is not declared in main block 0", pg.Grad, pg.Param))
			continue
		}
		for _, s := range states {
			if taken(pg.Param + s.suffix) {
				errs = append(errs, fmt.Errorf("var %s already declared", pg.Param+s.suffix))
			}
		}
		if p.Type.DType != ir.F64 {
			lrDType = ir.F32
		}
		if lrDist == nil && p.Dist != nil {
			lrDist = &ir.TensorDist{Mesh: p.Dist.Mesh, DimsMapping: []int{-1}}
		}
		pairs = append(pairs, pair{p, pg.Grad})
	}
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	if len(pairs) == 0 {
		return 0, errors.New("no params-grads pair has a grad")
	}

	b := ir.NewBuilder(m)
	s := b.Startup()
	// declare adds name to main and startup, with its initialiser.
	declare := func(name string, t ir.Type, d *ir.TensorDist, value float64) error {
		code, ok := t.DType.PaddleCode()
		if !ok {
			return fmt.Errorf("var %s: dtype %s has no Paddle code", name, t.DType)
		}
		b.Persist(name, t).Dist = d.Clone()
		s.Persist(name, ir.Tensor(t.DType, slices.Clone(t.Shape)...)).Dist = d.Clone()
		shape := make(ir.Ints, len(t.Shape))
		copy(shape, t.Shape)
		s.Op("fill_constant", nil, ir.Slots("Out", name),
			ir.A("dtype", ir.Int(code)), ir.A("shape", shape), ir.A("value", ir.Float(value)))
		return nil
	}
	if err := declare(LearningRateVar, ir.Tensor(lrDType, 1), lrDist, lr); err != nil {
		return 0, err
	}
	n := 0
	for _, pr := range pairs {
		p := pr.p
		ins := ir.Slots("Param", p.Name(), "Grad", pr.grad, "LearningRate", LearningRateVar)
		outs := ir.Slots("ParamOut", p.Name())
		for _, st := range states {
			name := p.Name() + st.suffix
			t, d := ir.Tensor(p.Type.DType, slices.Clone(p.Type.Shape)...), p.Dist.Clone()
			if st.scalar {
				t = ir.Tensor(p.Type.DType, 1)
				if d != nil {
					d = &ir.TensorDist{Mesh: d.Mesh, DimsMapping: []int{-1}}
				}
			} else if d != nil {
				d.Partial = nil
			}
			if err := declare(name, t, d, st.init); err != nil {
				return n, err
			}
			ins = append(ins, ir.S(st.in, name))
			outs = append(outs, ir.S(st.out, name))
		}
		op := b.Op(typ, ins, outs).WithRole(ir.RoleOptimize)
		switch typ {
		case "momentum":
			op.WithAttr("mu", ir.Float(momentumMu)).WithAttr("use_nesterov", ir.Bool(false))
		case "adam":
			op.WithAttr("beta1", ir.Float(adamBeta1)).WithAttr("beta2", ir.Float(adamBeta2)).
				WithAttr("epsilon", ir.Float(adamEpsilon))
		}
		if p.Dist != nil {
			b.Annotate(op, "default", 0)
		}
		n++
	}
	return n, b.Err()
}
