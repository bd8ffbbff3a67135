package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/distpass/distpass/ir"
)

// allreduces is rank's program of same-shaped allreduces on group 0, one
// per origin given ("" for none).
func allreduces(rank int, origins ...string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%sprogram main rank %d { block 0 {\n var a : f64[2]\n var b : f64[2]\n", head, rank)
	for i, o := range origins {
		attrs := "ring_id = 0"
		if o != "" {
			attrs = "origin_op = " + o + ", ring_id = 0"
		}
		fmt.Fprintf(&sb, " var s%d : f64[2]\n op %d c_allreduce_sum(X: a) -> (Out: s%d) {%s}\n", i, 10*rank+i+1, i, attrs)
	}
	sb.WriteString("}}")
	return sb.String()
}

func runTwo(t *testing.T, r0, r1 string) error {
	t.Helper()
	mods := rankModules(t, r0, r1)
	feed := func() Scope { return Scope{"a": Zeros(ir.F64, 2), "b": Zeros(ir.F64, 2)} }
	return runWithin(t, 20*time.Second, &SPMD{Deadline: 10 * time.Second}, []int{0, 1}, mods, []Scope{feed(), feed()})
}

// TestCollectivesMatchByOrigin: two same-shaped allreduces in another
// order on one rank fail at the first, naming both ops and origins; a
// rank that drops one fails at its first disagreement, not at a later op.
func TestCollectivesMatchByOrigin(t *testing.T) {
	for _, c := range []struct {
		name   string
		r0, r1 []string
		want   string
	}{
		{"swapped", []string{"5", "7"}, []string{"7", "5"},
			"collective mismatch on group [0 1]: rank 0 op 1 c_allreduce_sum (c_allreduce_sum/0 f64[2], origin_op 5) against rank 1 op 11 c_allreduce_sum (c_allreduce_sum/0 f64[2], origin_op 7)"},
		{"dropped", []string{"5", "7", "9"}, []string{"7", "9"},
			"collective mismatch on group [0 1]: rank 0 op 1 c_allreduce_sum (c_allreduce_sum/0 f64[2], origin_op 5) against rank 1 op 11 c_allreduce_sum (c_allreduce_sum/0 f64[2], origin_op 7)"},
		{"dropped last", []string{"5", "7"}, []string{"5"},
			"rank 0: op 2 c_allreduce_sum on group [0 1]: rank 1 finished its program without joining"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := runTwo(t, allreduces(0, c.r0...), allreduces(1, c.r1...))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v\nwant %s", err, c.want)
			}
		})
	}
	// Members that carry no origin (a program of another tool) match by
	// kind and shape, as before; one member without one matches any.
	for _, c := range [][2][]string{{{"", ""}, {"", ""}}, {{"5", ""}, {"", "7"}}, {{"5", "7"}, {"5", "7"}}} {
		if err := runTwo(t, allreduces(0, c[0]...), allreduces(1, c[1]...)); err != nil {
			t.Errorf("origins %q and %q: %v", c[0], c[1], err)
		}
	}
}

// TestPointToPointPairs: every send_v2 must meet its peer's recv_v2.
func TestPointToPointPairs(t *testing.T) {
	// peer is the other rank's index in the ring's group; both rings hold
	// both ranks.
	const rings = "group 0 ranks [0, 1]\ngroup 1 ranks [0, 1]\n"
	prog := func(rank int, ops ...string) string {
		return fmt.Sprintf("%sprogram main rank %d { block 0 {\n var a : f64[2]\n var r : f64[2]\n %s\n}}",
			rings, rank, strings.Join(ops, "\n "))
	}
	send := func(id, peer, ring int) string {
		return fmt.Sprintf("op %d send_v2(X: a) -> () {peer = %d, ring_id = %d}", id, peer, ring)
	}
	recv := func(id, peer, ring int) string {
		return fmt.Sprintf("op %d recv_v2() -> (Out: r) {peer = %d, ring_id = %d}", id, peer, ring)
	}
	for _, c := range []struct {
		name   string
		r0, r1 []string
		want   string
	}{
		{"send meets send", []string{send(1, 1, 0)}, []string{send(2, 0, 0)},
			"point-to-point mismatch: rank 0 op 1 send_v2 to rank 1 (p2p/0) meets rank 1 op 2 send_v2 to rank 0 (p2p/0): both send, neither receives"},
		{"recv meets recv", []string{recv(1, 1, 0)}, []string{recv(2, 0, 0)},
			"point-to-point mismatch: rank 0 op 1 recv_v2 from rank 1 (p2p/0) meets rank 1 op 2 recv_v2 from rank 0 (p2p/0): both receive, neither sends"},
		{"other ring", []string{send(1, 1, 0)}, []string{recv(2, 0, 1)},
			"point-to-point mismatch: rank 0 op 1 send_v2 to rank 1 (p2p/0) meets rank 1 op 2 recv_v2 from rank 0 (p2p/1): not the same ring"},
		{"never received", []string{send(1, 1, 0)}, []string{"op 2 relu(X: a) -> (Out: r)"},
			"rank 0: op 1 send_v2 to rank 1 (p2p/0): rank 1 finished its program without receiving it"},
		{"second never received", []string{send(1, 1, 0), send(3, 1, 0)}, []string{recv(2, 0, 0)},
			"rank 0: op 3 send_v2 to rank 1 (p2p/0): rank 1 finished its program without receiving it"},
		{"send to itself", []string{send(1, 0, 0)}, []string{"op 2 relu(X: a) -> (Out: r)"},
			"rank 0: op 1 send_v2: peer 0 is the rank itself"},
		{"send meets allreduce", []string{send(1, 1, 0)}, []string{"op 2 c_allreduce_sum(X: a) -> (Out: r) {ring_id = 0}"},
			"collective mismatch on group [0 1]: rank 0 op 1 send_v2 (p2p/0) against rank 1 op 2 c_allreduce_sum (c_allreduce_sum/0 f64[2])"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := runTwo(t, prog(0, c.r0...), prog(1, c.r1...))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v\nwant %s", err, c.want)
			}
		})
	}
	// An exchange both ways, in a matching order, runs.
	if err := runTwo(t, prog(0, send(1, 1, 0), recv(2, 1, 0)), prog(1, recv(3, 0, 0), send(4, 0, 0))); err != nil {
		t.Fatal(err)
	}
}
