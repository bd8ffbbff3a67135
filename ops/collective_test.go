package ops_test

import (
	"slices"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// TestCollectiveTraits: the Collective trait is the one list of the op
// types that communicate: the c_* collectives, their newer names,
// point-to-point transfers and the MoE exchanges, and not the compute
// ops whose names look alike (c_embedding looks up a local vocabulary
// shard, c_softmax_with_cross_entropy is a fused kernel), nor the stream
// syncs (they move no data), nor a grad type.
func TestCollectiveTraits(t *testing.T) {
	want := []string{"all_gather", "all_reduce", "all_to_all", "alltoall", "barrier", "broadcast",
		"c_allgather", "c_allreduce_avg", "c_allreduce_max", "c_allreduce_min", "c_allreduce_prod", "c_allreduce_sum",
		"c_alltoall", "c_broadcast", "c_concat", "c_identity", "c_reduce_avg", "c_reduce_max", "c_reduce_min",
		"c_reduce_prod", "c_reduce_sum", "c_reducescatter", "c_scatter", "c_split", "global_gather", "global_scatter",
		"mp_allreduce_sum", "p_recv", "p_send", "partial_allgather", "partial_recv", "partial_send", "recv_v2",
		"reduce_scatter", "send_v2"}
	var got []string
	for _, d := range ops.All() {
		if ops.IsCollective(d.Type) {
			got = append(got, d.Type)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("collectives:\n got %q\nwant %q", got, want)
	}
	for _, typ := range []string{"c_embedding", "c_softmax_with_cross_entropy", "c_sync_comm_stream", "matmul_v2",
		"scatter", "reduce_sum", "", "c_allreduce_sum_grad", "no_such_op"} {
		if ops.IsCollective(typ) {
			t.Errorf("%s is a collective", typ)
		}
	}
}

// TestSideEffects: dead-code elimination keeps the collectives, feed and
// fetch, control flow, the AMP checks, and a type the table does not
// define; it may drop a pure op.
func TestSideEffects(t *testing.T) {
	for _, typ := range []string{"c_allreduce_sum", "send_v2", "feed", "fetch", "fetch_v2", "while", "conditional_block",
		"check_finite_and_unscale", "update_loss_scaling", "save", "print"} {
		if !ops.HasSideEffects(typ) {
			t.Errorf("%s has no side effects", typ)
		}
	}
	for _, typ := range []string{"matmul_v2", "relu", "c_embedding", "reshard", "uniform_random", "fill_constant"} {
		if ops.HasSideEffects(typ) {
			t.Errorf("%s has side effects", typ)
		}
	}
}

const groups = "group 0 ranks [0, 1]\n"

func TestCollectiveInfer(t *testing.T) {
	runInferCases(t, groups, []inferCase{
		{"c_reducescatter", "var x : f32[8, 3]\nvar o : f32[4, 3]\nop 1 c_reducescatter(X: x) -> (Out: o) {nranks = 2, ring_id = 0}",
			[]string{"Out[0] f32[4, 3]"}},
		{"reduce_scatter/unknown", "var x : f32[-1, 3]\nvar o : f32[-1, 3]\nop 1 reduce_scatter(x: x) -> (out: o) {nranks = 2, ring_id = 0}",
			[]string{"out[0] f32[-1, 3]"}},
		{"c_allgather/scalar", "var x : f32[]\nvar o : f32[2]\nop 1 c_allgather(X: x) -> (Out: o) {nranks = 2, ring_id = 0}",
			[]string{"Out[0] f32[2]"}},
		{"c_concat/default_nranks", "var x : f32[2, 3]\nvar o : f32[2, 3]\nop 1 c_concat(X: x) -> (Out: o) {ring_id = 0}",
			[]string{"Out[0] f32[2, 3]"}},
		{"c_scatter", "var x : f32[6, 3]\nvar o : f32[3, 3]\nop 1 c_scatter(X: x) -> (Out: o) {nranks = 2, root = 0, ring_id = 0}",
			[]string{"Out[0] f32[3, 3]"}},
		{"c_reduce_sum", "var x : f32[6, 3]\nvar o : f32[6, 3]\nop 1 c_reduce_sum(X: x) -> (Out: o) {root_id = 1, ring_id = 0}",
			[]string{"Out[0] f32[6, 3]"}},
		{"partial_recv", "var o : f16[4, 2]\nop 1 partial_recv() -> (Out: o) {dtype = 4, out_shape = [4, 2], peer = 1, num = 2, id = 0, ring_id = 0}",
			[]string{"Out[0] f16[4, 2]"}},
		{"recv_v2/no_out_shape", "var o : f32[-1, 2]\nop 1 recv_v2() -> (Out: o) {dtype = 5, peer = 1, ring_id = 0}",
			[]string{"Out[0] f32[-1, 2]"}},
		{"c_sync_comm_stream", "var a : f32[2]\nvar b : i64[3, 1]\nop 1 c_sync_comm_stream(X: [a, b]) -> (Out: [a, b]) {ring_id = 0}",
			[]string{"Out[0] f32[2]", "Out[1] i64[3, 1]"}},
	})
}

func TestCollectiveErrors(t *testing.T) {
	runOpCases(t, groups, []opCase{
		{"c_allgather/nranks", "var x : f32[2, 3]\nvar o : f32[4, 3]\nop 1 c_allgather(X: x) -> (Out: o) {ring_id = 0}",
			[]string{"op 1 c_allgather: inconsistent inputs: attr nranks is required (the size of the group)"}},
		{"c_allgather/declared", "var x : f32[2, 3]\nvar o : f32[2, 3]\nop 1 c_allgather(X: x) -> (Out: o) {nranks = 2, ring_id = 0}",
			[]string{"op 1 c_allgather: output Out o: declared f32[2, 3], inferred [4, 3] from X f32[2, 3]"}},
		{"c_reducescatter/uneven", "var x : f32[3, 3]\nvar o : f32[1, 3]\nop 1 c_reducescatter(X: x) -> (Out: o) {nranks = 2, ring_id = 0}",
			[]string{"op 1 c_reducescatter: inconsistent inputs: X x [3, 3]: dim 0 (3) does not split over nranks 2"}},
		{"c_split/zero_nranks", "var x : f32[3, 4]\nvar o : f32[3, 2]\nop 1 c_split(X: x) -> (Out: o) {nranks = 0, rank = 0, ring_id = 0}",
			[]string{"op 1 c_split: inconsistent inputs: nranks 0: want at least 1"}},
		{"c_concat/declared", "var x : f32[3, 4]\nvar o : f32[6, 4]\nop 1 c_concat(X: x) -> (Out: o) {nranks = 2, rank = 0, ring_id = 0}",
			[]string{"op 1 c_concat: output Out o: declared f32[6, 4], inferred [3, 8] from X f32[3, 4]"}},
		{"c_allreduce_sum/declared", "var x : f32[3, 4]\nvar o : f32[3, 2]\nop 1 c_allreduce_sum(X: x) -> (Out: o) {ring_id = 0}",
			[]string{"op 1 c_allreduce_sum: output Out o: declared f32[3, 2], inferred [3, 4] from X f32[3, 4]"}},
		{"all_reduce/reduce_type", "var x : f32[3]\nvar o : f32[3]\nop 1 all_reduce(x: x) -> (out: o) {reduce_type = 7, ring_id = 0}",
			[]string{"op 1 all_reduce: attr reduce_type = 7 is not one of [0, 1, 2, 3, 4]"}},
		{"all_reduce/upper_slots", "var x : f32[3]\nvar o : f32[3]\nop 1 all_reduce(X: x) -> (Out: o) {ring_id = 0}",
			[]string{"op 1 all_reduce: input slot X (x) is not a slot of all_reduce (slots: x); missing x",
				"op 1 all_reduce: output slot Out (o) is not a slot of all_reduce (slots: out); missing out"}},
		{"recv_v2/out_shape", "var o : f32[2, 3]\nop 1 recv_v2() -> (Out: o) {dtype = 5, out_shape = [3, 2], peer = 1, ring_id = 0}",
			[]string{"op 1 recv_v2: output Out o: declared f32[2, 3], inferred [3, 2] from its attrs"}},
		{"recv_v2/dtype", "var o : f32[2, 3]\nop 1 recv_v2() -> (Out: o) {dtype = 6, peer = 1, ring_id = 0}",
			[]string{"op 1 recv_v2: output Out o: declared f32[2, 3], inferred dtype f64 from its attrs"}},
		{"c_wait_comm/count", "var a : f32[2]\nvar b : f32[2]\nop 1 c_wait_comm(X: [a, b]) -> (Out: a) {ring_id = 0}",
			[]string{"op 1 c_wait_comm: inconsistent inputs: 2 X args but 1 Out args: each Out is its X"}},
		{"send_v2/output", "var x : f32[2]\nop 1 send_v2(X: x) -> (Out: x) {peer = 1, ring_id = 0}",
			[]string{"op 1 send_v2: output slot Out (x) is not a slot of send_v2 (it has none)"}},
	})
}

// TestNewerSpellings: each collective's newer spelling is a collective of
// the table, a reduction's code names the reduction its old type does,
// and every code all_reduce allows is some c_allreduce_*'s.
func TestNewerSpellings(t *testing.T) {
	codes := map[int]string{}
	for _, d := range ops.All() {
		n := d.Newer
		if n == nil {
			continue
		}
		if !ops.IsCollective(d.Type) || !ops.IsCollective(n.Type) {
			t.Errorf("%s spelled %s: both must be collectives of the table", d.Type, n.Type)
		}
		if n.ReduceType < 0 {
			continue
		}
		name, ok := ops.ReduceTypeName(int64(n.ReduceType))
		if !ok || d.Type != "c_allreduce_"+name {
			t.Errorf("%s spelled %s with reduce_type %d (%s)", d.Type, n.Type, n.ReduceType, name)
		}
		codes[n.ReduceType] = d.Type
	}
	for _, a := range ops.Lookup("all_reduce").Attrs {
		if a.Name != "reduce_type" {
			continue
		}
		if len(a.Allowed) != len(ops.ReduceTypes) || len(codes) != len(ops.ReduceTypes) {
			t.Errorf("all_reduce allows %v, spelled from %v", a.Allowed, codes)
		}
	}
}

// Classic undoes the newer dialect's spelling of every collective that
// has one: the type (by reduce_type where several share a name) and the
// slots x and out; an op of no newer spelling is itself.
func TestClassicUndoesNewer(t *testing.T) {
	n := 0
	for _, d := range ops.All() {
		if d.Newer == nil {
			continue
		}
		op := &ir.Op{ID: 1, Type: d.Newer.Type, Inputs: ir.Slots("x", "a"), Outputs: ir.Slots("out", "b")}
		if d.Newer.ReduceType >= 0 {
			op.Attrs.Set("reduce_type", ir.Int(int64(d.Newer.ReduceType)))
		}
		c, ok := ops.Classic(op)
		if !ok || c.Type != d.Type || len(c.Input("X")) != 1 || len(c.Output("Out")) != 1 || op.Type != d.Newer.Type {
			t.Errorf("%s: Classic gives %v, %v (the op %v)", d.Newer.Type, c, ok, op)
		}
		n++
	}
	if n < 5 {
		t.Fatalf("%d collectives with a newer spelling", n)
	}
	relu := &ir.Op{ID: 1, Type: "relu"}
	if c, ok := ops.Classic(relu); ok || c != relu {
		t.Error("relu has a classic spelling")
	}
}
