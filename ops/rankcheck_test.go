package ops_test

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// verifyLines parses src and returns ops.Verify's violations, one a
// string.
func verifyLines(t *testing.T, src string) []string {
	t.Helper()
	m, err := ir.ParseString("t.dpir", src)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	_, err = ops.Verify(m, ops.Options{})
	if err == nil {
		return nil
	}
	ve, ok := err.(*ir.VerifyError)
	if !ok {
		t.Fatalf("not a VerifyError: %v", err)
	}
	var out []string
	for _, v := range ve.Violations {
		out = append(out, v.Error())
	}
	return out
}

// rankProgram is a per-rank program of rank on a table of three groups,
// with vars x and y (f32[4, 3]), c (i64[8]), g (i64[6]), z (f32[6, 3]),
// w (f32[-1, 3]), s and s1 to s4 (f32[3]), and ops.
func rankProgram(rank string, ops string) string {
	return `mesh world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]
group 0 ranks [0, 1, 2, 3]
group 1 ranks [0, 1]
group 2 ranks [2, 3]
program main rank ` + rank + ` {
  block 0 {
    var x : f32[4, 3] {is_data}
    var c : i64[8] {is_data}
    var g : i64[6] {is_data}
    var z : f32[6, 3] {is_data}
    var y : f32[4, 3]
    var w : f32[-1, 3]
    var s : f32[3] {is_data}
    var s1 : f32[3]
    var s2 : f32[3]
    var s3 : f32[3]
    var s4 : f32[3]
` + ops + `
  }
}
`
}

// TestVerifyPerRankCollectives (issue 37, finding 9): in a per-rank
// program (a rank and a group table) every collective names a group of
// the table that holds the rank, and what it says about that group
// holds; each broken op gets one violation naming op, attr and why.
func TestVerifyPerRankCollectives(t *testing.T) {
	for _, c := range []struct {
		name, rank, op, want string
	}{
		{"ring names no group", "0", `op 1 c_allreduce_sum(X: x) -> (Out: y) {ring_id = 7}`,
			"main block 0: op 1 c_allreduce_sum: attr ring_id = 7 names no group of the group table (ids 0 to 2)"},
		{"ring -1", "0", `op 1 c_allreduce_sum(X: x) -> (Out: y) {ring_id = -1}`,
			"main block 0: op 1 c_allreduce_sum: attr ring_id = -1 names no group of the group table (ids 0 to 2)"},
		{"ring without the rank", "1", `op 1 c_allgather(X: x) -> (Out: y) {nranks = 1, ring_id = 2}`,
			"main block 0: op 1 c_allgather: attr ring_id = 2 names group 2 [2, 3], which rank 1 (this program's) is not in"},
		{"ring missing", "0", `op 1 c_identity(X: x) -> (Out: y)`,
			"main block 0: op 1 c_identity: attr ring_id missing: in a per-rank program (rank 0) every collective names the group it runs over, an id of the group table"},
		{"sync_batch_norm without ring", "0", `op 1 sync_batch_norm(X: x, Scale: s, Bias: s, Mean: s, Variance: s) -> (Y: y, MeanOut: s1, VarianceOut: s2, SavedMean: s3, SavedVariance: s4)`,
			"main block 0: op 1 sync_batch_norm: attr ring_id missing: in a per-rank program (rank 0) sync_batch_norm names the group it all-reduces its statistics over, an id of the group table"},
		{"send to itself", "1", `op 1 send_v2(X: x) -> () {peer = 1, ring_id = 1}`,
			"main block 0: op 1 send_v2: attr peer = 1 is rank 1 itself (index 1 of group 1 [0, 1]): a transfer needs another rank"},
		{"send to itself by default", "0", `op 1 send_v2(X: x) -> () {ring_id = 1}`,
			"main block 0: op 1 send_v2: attr peer = 0 is rank 0 itself (index 0 of group 1 [0, 1]): a transfer needs another rank"},
		{"recv outside the ring", "2", `op 1 recv_v2() -> (Out: y) {out_shape = [4, 3], peer = 2, ring_id = 2}`,
			"main block 0: op 1 recv_v2: attr peer = 2 is outside group 2 [2, 3]: it is an index into the group, 0 to 1"},
		{"recv peer -1", "2", `op 1 recv_v2() -> (Out: y) {out_shape = [4, 3], peer = -1, ring_id = 2}`,
			"main block 0: op 1 recv_v2: attr peer = -1 is outside group 2 [2, 3]: it is an index into the group, 0 to 1"},
		{"broadcast root outside", "0", `op 1 c_broadcast(X: x) -> (Out: y) {ring_id = 1, root = 2}`,
			"main block 0: op 1 c_broadcast: attr root = 2 is outside group 1 [0, 1]: it is an index into the group, 0 to 1"},
		{"new-dialect broadcast root outside", "0", `op 1 broadcast(x: x) -> (out: y) {ring_id = 0, root = 4}`,
			"main block 0: op 1 broadcast: attr root = 4 is outside group 0 [0, 1, 2, 3]: it is an index into the group, 0 to 3"},
		{"reduce root outside", "0", `op 1 c_reduce_sum(X: x) -> (Out: y) {ring_id = 1, root_id = 5}`,
			"main block 0: op 1 c_reduce_sum: attr root_id = 5 is outside group 1 [0, 1]: it is an index into the group, 0 to 1"},
		{"all-to-all rows", "0", `op 1 c_alltoall(X: z) -> (Out: w) {ring_id = 0}`,
			"main block 0: op 1 c_alltoall: input X z f32[6, 3]: dim 0 (6 rows) does not divide over the 4 ranks of group 0 [0, 1, 2, 3]"},
		{"alltoall counts", "0", `op 1 alltoall(X: g) -> (Out: g2) {ring_id = 0}`, ""},
		{"gather nranks", "0", `op 1 c_allgather(X: x) -> (Out: w) {nranks = 4, ring_id = 1}`,
			"main block 0: op 1 c_allgather: attr nranks = 4, but group 1 [0, 1] has 2 ranks"},
		{"MoE counts", "0", `op 1 global_scatter(X: x, local_count: g, global_count: c) -> (Out: w) {ring_id = 0}`,
			"main block 0: op 1 global_scatter: input local_count g i64[6]: 6 counts are not n_expert for each of the 4 ranks of group 0 [0, 1, 2, 3]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ops := c.op
			if c.name == "alltoall counts" {
				// g has 6 counts: they do not divide over 4 ranks.
				ops = "var g2 : i64[6]\n    " + ops
				c.want = "main block 0: op 1 alltoall: input X g i64[6]: dim 0 (6 rows) does not divide over the 4 ranks of group 0 [0, 1, 2, 3]"
			}
			got := verifyLines(t, rankProgram(c.rank, "    "+ops))
			if len(got) != 1 || got[0] != c.want {
				t.Errorf("got %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestVerifyPerRankCollectivesOK: collectives that name a group of the
// rank, peers and roots inside it and rows that divide verify; so do the
// same broken ops in a serial program (rank -1), or in a module without
// a group table, which these rules do not judge.
func TestVerifyPerRankCollectivesOK(t *testing.T) {
	ok := `    op 1 c_allreduce_sum(X: x) -> (Out: y) {ring_id = 1}
    op 2 send_v2(X: y) -> () {peer = 0, ring_id = 1}
    op 3 c_broadcast(X: x) -> (Out: w) {ring_id = 0, root = 3}
    op 4 c_alltoall(X: c) -> (Out: c2) {ring_id = 0}
    op 5 c_wait_comm(X: y) -> (Out: y2) {ring_id = 1}`
	src := rankProgram("1", "    var c2 : i64[8]\n    var y2 : f32[4, 3]\n"+ok)
	if got := verifyLines(t, src); got != nil {
		t.Errorf("a right per-rank program: %q", got)
	}
	bad := `    op 1 c_allreduce_sum(X: x) -> (Out: y) {ring_id = 7}
    op 2 send_v2(X: y) -> () {peer = 9}
    op 3 c_alltoall(X: z) -> (Out: w)`
	serial := strings.Replace(rankProgram("1", bad), "program main rank 1", "program main", 1)
	if got := verifyLines(t, serial); got != nil {
		t.Errorf("a serial program: %q", got)
	}
	noTable := strings.Replace(rankProgram("1", bad), "group 0 ranks [0, 1, 2, 3]\ngroup 1 ranks [0, 1]\ngroup 2 ranks [2, 3]\n", "", 1)
	if got := verifyLines(t, noTable); got != nil {
		t.Errorf("a program without a group table: %q", got)
	}
	// An op that is no collective judges its own ring_id: a fused
	// kernel's -1 means no communication.
	fused := rankProgram("1", `    op 1 fused_thing(X: x) -> (Out: y) {ring_id = -1}`)
	if got := verifyLines(t, fused); got != nil {
		t.Errorf("an undefined op's ring_id: %q", got)
	}
}

// TestVerifyInt32Attrs (issue 37, finding 8): an attr the table declares
// int or ints, Paddle's 32-bit int and std::vector<int>, holds int32
// values only, whatever kind the program wrote them as; the attrs
// Paddle keeps in 64 bits (declared long, longs) take any int64.
func TestVerifyInt32Attrs(t *testing.T) {
	prog := func(ops string) string {
		return `program main {
  block 0 {
    var x : f32[4, 3] {is_data}
    var ids : i64[4] {is_data}
    var y : f32[4, 3]
    var mask : u8[4, 3]
    var e : f32[4, 3]
    var r : f32[12]
    var big : f32[12, 4294967296]
` + ops + `
  }
}
`
	}
	for _, c := range []struct{ name, op, want string }{
		{"dropout seed", `op 1 dropout(X: x) -> (Out: y, Mask: mask) {fix_seed = true, seed = 2147483648}`,
			"main block 0: op 1 dropout: attr seed = 2147483648 is out of range: Paddle declares it a 32-bit int (-2147483648 to 2147483647)"},
		{"seed as a long", `op 1 dropout(X: x) -> (Out: y, Mask: mask) {seed = long(-2147483649)}`,
			"main block 0: op 1 dropout: attr seed = -2147483649 is out of range: Paddle declares it a 32-bit int (-2147483648 to 2147483647)"},
		{"uniform_random seed", `op 1 uniform_random() -> (Out: y) {seed = 4294967296, shape = [4, 3]}`,
			"main block 0: op 1 uniform_random: attr seed = 4294967296 is out of range: Paddle declares it a 32-bit int (-2147483648 to 2147483647)"},
		{"diag_num", `op 1 uniform_random() -> (Out: y) {diag_num = 9223372036854775807, shape = [4, 3]}`,
			"main block 0: op 1 uniform_random: attr diag_num = 9223372036854775807 is out of range: Paddle declares it a 32-bit int (-2147483648 to 2147483647)"},
		{"ring_id", `op 1 c_allreduce_sum(X: x) -> (Out: y) {ring_id = 2147483648}`,
			"main block 0: op 1 c_allreduce_sum: attr ring_id = 2147483648 is out of range: Paddle declares it a 32-bit int (-2147483648 to 2147483647)"},
		{"an ints element", `op 1 recv_v2() -> (Out: big) {out_shape = longs[12, 4294967296]}`,
			"main block 0: op 1 recv_v2: attr out_shape[1] = 4294967296 is out of range: Paddle declares out_shape a list of 32-bit ints (-2147483648 to 2147483647)"},
		{"int32 extremes", `op 1 dropout(X: x) -> (Out: y, Mask: mask) {seed = 2147483647}
    op 2 uniform_random() -> (Out: e) {seed = long(-2147483648), shape = [4, 3]}`, ""},
		// Paddle's int64_t attrs.
		{"padding_idx", `op 1 lookup_table_v2(Ids: ids, W: x) -> (Out: y) {padding_idx = 4294967296}`, ""},
		{"start_index", `op 1 c_embedding(Ids: ids, W: x) -> (Out: y) {start_index = long(8589934592)}`, ""},
		{"fill_constant shape", `op 1 fill_constant() -> (Out: r) {dtype = 5, shape = longs[12]}
    op 2 fill_constant() -> (Out: e) {dtype = 5, shape = [4, 3], value = 4294967296.0}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := verifyLines(t, prog("    "+c.op))
			if c.want == "" {
				if got != nil {
					t.Errorf("got %q, want no violation", got)
				}
				return
			}
			if len(got) != 1 || got[0] != c.want {
				t.Errorf("got %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestVerifyInt32AttrsDeclared: the attrs of the table that Paddle keeps
// in 64 bits are declared long or longs, so that the 32-bit rule does
// not refuse their values; the others of these names stay int.
func TestVerifyInt32AttrsDeclared(t *testing.T) {
	for _, c := range []struct {
		typ, attr string
		kind      ir.AttrKind
	}{
		{"lookup_table_v2", "padding_idx", ir.KindLong},
		{"lookup_table", "padding_idx", ir.KindLong},
		{"c_embedding", "start_index", ir.KindLong},
		{"c_embedding", "vocab_size", ir.KindLong},
		{"adam", "min_row_size_to_use_multithread", ir.KindLong},
		{"prune_gate_by_capacity", "n_expert", ir.KindLong},
		{"fill_constant", "shape", ir.KindLongs},
		{"pd_op.full", "shape", ir.KindLongs},
		{"dropout", "seed", ir.KindInt},
		{"uniform_random", "seed", ir.KindInt},
		{"gaussian_random", "seed", ir.KindInt},
		{"c_allreduce_sum", "ring_id", ir.KindInt},
		{"softmax", "axis", ir.KindInt},
		{"reshape2", "shape", ir.KindInts},
	} {
		d := ops.Lookup(c.typ)
		if d == nil {
			t.Errorf("%s: no def", c.typ)
			continue
		}
		found := false
		for _, a := range d.Attrs {
			if a.Name == c.attr {
				found = true
				if a.Type != c.kind {
					t.Errorf("%s %s declared %s, want %s", c.typ, c.attr, a.Type, c.kind)
				}
			}
		}
		if !found {
			t.Errorf("%s has no attr %s", c.typ, c.attr)
		}
	}
}

// TestVerifyCastDType (issue 37, finding 9): cast converts to a dtype
// its attrs name; a code that names none (99, -1) is refused, as is an
// unknown code in any dtype attr, where -1 elsewhere means "the input's".
func TestVerifyCastDType(t *testing.T) {
	prog := func(op string) string {
		return `program main {
  block 0 {
    var x : f32[4, 3] {is_data}
    var y : f32[4, 3]
    ` + op + `
  }
}
`
	}
	codes := "(Paddle's VarType codes: bool 0, i16 1, i32 2, i64 3, f16 4, f32 5, f64 6, u8 20, i8 21, bf16 22)"
	for _, c := range []struct{ op, want string }{
		{`op 1 cast(X: x) -> (Out: y) {in_dtype = 5, out_dtype = 99}`,
			"main block 0: op 1 cast: attr out_dtype = 99 names no dtype distpass knows " + codes},
		{`op 1 cast(X: x) -> (Out: y) {in_dtype = 5, out_dtype = -1}`,
			"main block 0: op 1 cast: attr out_dtype = -1 names no dtype, and cast needs one " + codes},
		{`op 1 cast(X: x) -> (Out: y) {in_dtype = long(7), out_dtype = 5}`,
			"main block 0: op 1 cast: attr in_dtype = 7 names no dtype distpass knows " + codes},
		{`op 1 fill_any_like(X: x) -> (Out: y) {dtype = 42}`,
			"main block 0: op 1 fill_any_like: attr dtype = 42 names no dtype distpass knows " + codes},
		{`op 1 cast(X: x) -> (Out: y) {in_dtype = 5, out_dtype = 5}`, ""},
		{`op 1 fill_any_like(X: x) -> (Out: y) {dtype = -1}`, ""},
	} {
		got := verifyLines(t, prog(c.op))
		if c.want == "" && got != nil || c.want != "" && (len(got) != 1 || got[0] != c.want) {
			t.Errorf("%s:\ngot  %q\nwant %q", c.op, got, c.want)
		}
	}
}
