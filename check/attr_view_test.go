package check_test

import (
	"context"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
)

// TestIntegerBoolAttrsReadAlike: a bool attr written as an int (Paddle's
// loader reads trans_y = 1 as true, and so does verify) means the same
// to the impl that lowers the op and to the kernels that run it: the
// column-parallel matmul lowers it as it lowers trans_y = true, and
// check proves it.
func TestIntegerBoolAttrsReadAlike(t *testing.T) {
	const src = `mesh world shape [2] dims [mp] ranks [1, 0]
program main {
  block 0 {
    var x : f64[4, 8] @world[-1, -1] {is_data, stop_gradient}
    var w : f64[6, 8] @world[0, -1] {is_data, stop_gradient}
    var y : f64[4, 6] @world[-1, 0]
    op 1 matmul_v2(X: x, Y: w) -> (Out: y) {trans_x = 0, trans_y = TY} role forward
         dist @world impl matmul_v2:0 [x: [-1, -1], w: [0, -1] -> y: [-1, 0]]
  }
}
`
	var progs []string
	for _, ty := range []string{"true", "1"} {
		m, err := ir.ParseString("attr_"+ty+".dpir", strings.ReplaceAll(src, "TY", ty))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := check.Run(context.Background(), m, check.Options{Steps: 1})
		if err != nil {
			t.Fatalf("trans_y = %s: %v", ty, err)
		}
		if err := rep.Err(); err != nil || rep.Count("activation") == 0 {
			t.Fatalf("trans_y = %s: %v, %d activations compared", ty, err, rep.Count("activation"))
		}
		var sb strings.Builder
		parts, err := check.Written(context.Background(), m, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, pm := range parts {
			sb.Write(ir.Print(pm))
		}
		progs = append(progs, strings.ReplaceAll(sb.String(), "trans_y = "+ty, "trans_y = TY"))
	}
	if progs[0] != progs[1] {
		t.Errorf("trans_y = 1 lowers otherwise than trans_y = true:\n%s\n---\n%s", progs[0], progs[1])
	}
}
