package passes_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// TestPartitionRefusesUnverified: the CLI verifies every module before a
// pass sees it, but a caller of the Go API may hand partition a module
// that was never verified. Partition's own checks must still refuse each
// of these, naming the op or var, rather than lower it or panic. The
// files are the catalogue of bad input's (whose commands now stop at
// verify, with the verifier's message) and one of this package's.
func TestPartitionRefusesUnverified(t *testing.T) {
	const bad = "../testdata/bad"
	cases := []struct{ file, want string }{
		{bad + "/dup_op_id_fwd.dpir", `rank 0: op 2 relu_grad: lower-backward: fwd 1 names more than one op (op ids must be unique)`},
		{bad + "/dangling_op_mesh.dpir", `main block 0: op 1 relu: dist on unknown mesh nosuch`},
		{bad + "/dangling_var_partition.dpir", `main block 0: op 1 relu: input X names undeclared var x`},
		{bad + "/mapping_length_op.dpir", `main block 0: op 1 relu: dist input x: dims_mapping [0, -1, -1] has length 3, tensor rank is 2`},
		{bad + "/role_unknown_bits.dpir", `rank 0: op 1 relu: lower-optimizer: role 0x1000 is neither forward, backward nor optimize`},
		{bad + "/fwd_missing.dpir", `rank 0: op 2 relu_grad: lower-backward: fwd op 1 is missing`},
		{bad + "/fwd_not_forward.dpir", `rank 0: op 2 relu_grad: lower-backward: fwd op 2 relu_grad is not a forward op (role backward)`},
		{bad + "/grads_no_param.dpir", `remap-params-grads: grads: param v is not in the partitioned program`},
		{bad + "/cycle_partition.dpir", `relink-block-attrs: main block 2: op 3 conditional_block: attr sub_block: block refs form a cycle: 1 -> 2 -> 1`},
		{bad + "/overflow_partition.dpir", `main block 0: var w: shape [4294967296, 4294967296, -1]: element count overflows int64`},
		// Both of partition's closing checks fail (they run at once): the
		// block refs' error is the one reported, as when they ran one
		// after the other.
		{"testdata/cycle_and_grads_partition.dpir", `relink-block-attrs: main block 2: op 3 conditional_block: attr sub_block: block refs form a cycle: 1 -> 2 -> 1`},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			src, err := os.ReadFile(c.file)
			if err != nil {
				t.Fatal(err)
			}
			m, err := ir.Parse(c.file, src)
			if err != nil {
				t.Fatal(err)
			}
			if ir.Verify(m) == nil {
				t.Fatalf("%s verifies: the case is not about unverified input", c.file)
			}
			pl, err := passes.DefaultRegistry().Parse("partition{rank=0}")
			if err != nil {
				t.Fatal(err)
			}
			err = (&passes.Manager{}).Run(context.Background(), pl, m)
			want := `pass partition{rank=0} (execution 1 of "partition{rank=0}"): ` + c.want
			if err == nil || err.Error() != want {
				t.Errorf("partition: %v\nwant %s", err, want)
			}
		})
	}
}
