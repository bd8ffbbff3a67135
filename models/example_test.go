package models_test

import (
	"fmt"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
)

// Build the tiny GPT's training step, annotated for dp×mp on a 2×4 mesh.
func ExampleGPTTraining() {
	m, err := models.GPTTraining(models.TinyGPT(), "dp,mp", models.Mesh([]int{2, 4}, []string{"dp", "mp"}), "sgd")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Meshes[0])
	fmt.Println(len(m.ParamGrads), "parameters, each with its grad")
	fmt.Println(ir.PrintVar(m.Main.Global().Var("l0_q_w")))
	fmt.Println(ir.PrintVar(m.Main.Global().Var("wte")))
	// Output:
	// world shape [2, 4] dims [dp, mp] ranks [0, 1, 2, 3, 4, 5, 6, 7]
	// 37 parameters, each with its grad
	// param l0_q_w : f32[64, 64] @world[-1, 1] {trainable}
	// param wte : f32[128, 64] @world[1, -1] {trainable}
}

// Build an MoE layer's training step, experts split along ep and tokens
// over every rank of a 2×2 dp×ep mesh.
func ExampleMoETraining() {
	m, err := models.MoETraining(models.MoEConfig{Tokens: 8, Experts: 4, TopK: 2}, "dp,ep",
		models.Mesh([]int{2, 2}, []string{"dp", "ep"}), "sgd")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, pm := range m.Meshes {
		fmt.Println(pm)
	}
	g := m.Main.Global()
	for _, v := range []string{"x", "gate_w", "w1", "xr", "local_count"} {
		fmt.Println(ir.PrintVar(g.Var(v)))
	}
	// Output:
	// world shape [2, 2] dims [dp, ep] ranks [0, 1, 2, 3]
	// tokens shape [4] dims [dp_ep] ranks [0, 1, 2, 3]
	// var x : f32[8, 4] @tokens[0, -1] {is_data, stop_gradient}
	// param gate_w : f32[4, 4] @tokens[-1, -1] {trainable}
	// param w1 : f32[4, 4, 8] @world[1, -1, -1] {trainable}
	// var xr : f32[-1, 4] @world[0, -1]
	// var local_count : i64[4] @tokens[-1] partial [0] {stop_gradient}
}
