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
