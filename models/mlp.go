package models

import (
	"fmt"
	"math"
	"strconv"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// MLPConfig sizes an MLP. A zero field takes its default: 2 layers,
// hidden size 16, batch 8, f32.
type MLPConfig struct {
	Layers, Hidden, Batch int
	DType                 ir.DType
}

func (c MLPConfig) withDefaults() MLPConfig {
	if c.Layers <= 0 {
		c.Layers = 2
	}
	if c.Hidden <= 0 {
		c.Hidden = 16
	}
	if c.Batch <= 0 {
		c.Batch = 8
	}
	if c.DType == ir.DTypeInvalid {
		c.DType = ir.F32
	}
	return c
}

// MLP returns a serial, forward-only MLP named "mlp": a data var x
// [Batch, Hidden] (is_data, stop_gradient); per layer i a trainable param
// w_i [Hidden, Hidden] and b_i [Hidden] and the ops
//
//	matmul_v2(X: in, Y: w_i) -> mm_i
//	elementwise_add(X: mm_i, Y: b_i) -> add_i
//	relu(X: add_i) -> relu_i        (not after the last layer)
//
// then mean(X: last) -> loss, a scalar, with role forward|loss. The
// startup program initialises w_i with uniform_random in ±1/sqrt(Hidden)
// and seed i+1, and b_i with fill_constant 0. There is no backward, no
// optimizer and no distribution: append-backward, append-optimizer and
// Annotate add those.
func MLP(cfg MLPConfig) *ir.Module {
	cfg = cfg.withDefaults()
	h, bs := int64(cfg.Hidden), int64(cfg.Batch)
	dt := cfg.DType
	code, _ := dt.PaddleCode()
	bound := 1 / math.Sqrt(float64(cfg.Hidden))

	m := ir.NewModule("mlp")
	b := ir.NewBuilder(m)
	s := b.Startup()
	b.Var("x", ir.Tensor(dt, bs, h)).WithFlags(ir.FlagIsData | ir.FlagStopGradient)
	in := "x"
	for i := range cfg.Layers {
		n := strconv.Itoa(i)
		w, bias, mm, add := "w_"+n, "b_"+n, "mm_"+n, "add_"+n
		b.Param(w, ir.Tensor(dt, h, h)).WithFlags(ir.FlagTrainable)
		b.Param(bias, ir.Tensor(dt, h)).WithFlags(ir.FlagTrainable)
		s.Param(w, ir.Tensor(dt, h, h)).WithFlags(ir.FlagTrainable)
		s.Param(bias, ir.Tensor(dt, h)).WithFlags(ir.FlagTrainable)
		s.Op("uniform_random", nil, ir.Slots("Out", w),
			ir.A("dtype", ir.Int(code)), ir.A("shape", ir.Ints{h, h}),
			ir.A("min", ir.Float(-bound)), ir.A("max", ir.Float(bound)), ir.A("seed", ir.Int(int64(i+1))))
		s.Op("fill_constant", nil, ir.Slots("Out", bias),
			ir.A("dtype", ir.Int(code)), ir.A("shape", ir.Ints{h}), ir.A("value", ir.Float(0)))

		b.Var(mm, ir.Tensor(dt, bs, h))
		b.Var(add, ir.Tensor(dt, bs, h))
		b.Op("matmul_v2", ir.Slots("X", in, "Y", w), ir.Slots("Out", mm),
			ir.A("trans_x", ir.Bool(false)), ir.A("trans_y", ir.Bool(false)))
		b.Op("elementwise_add", ir.Slots("X", mm, "Y", bias), ir.Slots("Out", add), ir.A("axis", ir.Int(-1)))
		in = add
		if i < cfg.Layers-1 {
			relu := "relu_" + n
			b.Var(relu, ir.Tensor(dt, bs, h))
			b.Op("relu", ir.Slots("X", add), ir.Slots("Out", relu))
			in = relu
		}
	}
	b.Var("loss", ir.Tensor(dt))
	b.Op("mean", ir.Slots("X", in), ir.Slots("Out", "loss")).WithRole(ir.RoleLoss)
	if err := b.Err(); err != nil {
		panic("models.MLP: " + err.Error()) // the names above are distinct
	}
	return m
}

// MLPTraining returns an annotated MLP training program: MLP(cfg), a
// backward of append-backward, the strategy of Annotate
// on mesh, the params-grads list, and append-optimizer of type optimizer
// ("" is sgd) with learning rate 0.01.
func MLPTraining(cfg MLPConfig, strategy string, mesh *ir.ProcessMesh, optimizer string) (*ir.Module, error) {
	return train(MLP(cfg), Annotate, strategy, mesh, optimizer)
}

// train completes a forward-only module into an annotated training step:
// append-backward from "loss", the strategy's annotations (annotate sees
// the grad ops, giving each its forward op's impl), append-optimizer with
// learning rate 0.01, then Verify.
func train(m *ir.Module, annotate func(*ir.Module, string, *ir.ProcessMesh) error,
	strategy string, mesh *ir.ProcessMesh, optimizer string) (*ir.Module, error) {
	if optimizer == "" {
		optimizer = "sgd"
	}
	if _, err := passes.AppendBackward(m, "loss"); err != nil {
		return nil, fmt.Errorf("append-backward: %w", err)
	}
	if err := annotate(m, strategy, mesh); err != nil {
		return nil, err
	}
	if _, err := passes.AppendOptimizer(m, optimizer, 0.01); err != nil {
		return nil, fmt.Errorf("append-optimizer: %w", err)
	}
	if err := ir.Verify(m); err != nil {
		return nil, err
	}
	return m, nil
}
