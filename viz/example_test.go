package viz_test

import (
	"fmt"
	"os"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/viz"
)

// Draw a one-op program: the op is a box coloured by its role, vars are
// ellipses labelled with name, type and distribution, the param a
// cylinder.
func ExampleDOT() {
	m, err := ir.ParseString("tiny.dpir", `
mesh world shape [2] dims [dp] ranks [0, 1]
program main {
  block 0 {
    var x : f32[8, 16] @world[0, -1]
    param w : f32[16, 4] @world[-1, -1]
    var y : f32[8, 4] @world[0, -1]
    op 1 matmul_v2(X: x, Y: w) -> (Out: y) role forward
         dist @world impl matmul_v2:0 [x: [0, -1], w: [-1, -1] -> y: [0, -1]]
  }
}`)
	if err != nil {
		fmt.Println(err)
		return
	}
	os.Stdout.Write(viz.DOT(m.Main, viz.Options{}))
	// Output:
	// digraph "program main" {
	// 	subgraph cluster_s1 {
	// 		color="#8c8c8c";label="block 0";style="rounded";
	// 		n2[fillcolor="#cfe2f3",label="op 1 matmul_v2\nmatmul_v2:0",shape="box",style="rounded,filled"];
	// 		n3[label="x\nf32[8, 16]\n@world[0, -1]",shape="ellipse"];
	// 		n4[fillcolor="#fff2a8",label="w\nf32[16, 4]\n@world[-1, -1]",shape="cylinder",style="filled"];
	// 		n5[label="y\nf32[8, 4]\n@world[0, -1]",shape="ellipse"];
	// 		n2->n5;
	// 		n3->n2[label="X"];
	// 		n4->n2[label="Y"];
	// 	}
	// 	compound="true";label="program main";labelloc="t";newrank="true";
	// }
}
