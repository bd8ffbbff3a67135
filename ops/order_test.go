package ops_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// TestViolationOrderAcrossBatches: op checks run in batches on a worker
// goroutine, but their violations are listed where the op's own are, in
// op order, as one walk would list them: here over several batches, with
// structural violations (an undeclared input, a fwd naming no op) and
// op-table ones (a wrong declared shape) interleaved, and both on one op
// (the structural one first); an op whose input does not resolve is not
// inferred.
func TestViolationOrderAcrossBatches(t *testing.T) {
	const n = 5000
	var sb strings.Builder
	sb.WriteString("program main {\n block 0 {\n  var x : f32[4] {is_data}\n")
	for i := 1; i <= n; i++ {
		shape := "[4]"
		if i%700 == 0 || i%1100 == 0 {
			shape = "[5]"
		}
		fmt.Fprintf(&sb, "  var y%d : f32%s\n", i, shape)
	}
	var want []string
	for i := 1; i <= n; i++ {
		in := "x"
		if i%900 == 0 {
			in = "ghost"
			want = append(want, fmt.Sprintf("main block 0: op %d relu: input X names undeclared var ghost", i))
		}
		role := ""
		if i%1100 == 0 {
			role = " role backward fwd 99999"
			want = append(want, fmt.Sprintf("main block 0: op %d relu: fwd 99999 names no op", i))
		}
		if (i%700 == 0 || i%1100 == 0) && i%900 != 0 {
			want = append(want, fmt.Sprintf("main block 0: op %d relu: output Out y%d: declared f32[5], inferred [4] from X f32[4]", i, i))
		}
		fmt.Fprintf(&sb, "  op %d relu(X: %s) -> (Out: y%d)%s\n", i, in, i, role)
	}
	sb.WriteString(" }\n}\n")
	m, err := ir.Parse("order.dpir", []byte(sb.String()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = ops.Verify(m, ops.Options{})
	var ve *ir.VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v", err)
	}
	var got []string
	for _, v := range ve.Violations {
		got = append(got, v.Error())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
