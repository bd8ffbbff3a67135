package sim

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/distpass/distpass/ir"
)

// runWithin runs the programs and fails the test, instead of hanging
// it, when the run outlives limit: each case below must end in an error
// well before the test binary's own timeout.
func runWithin(t *testing.T, limit time.Duration, spmd *SPMD, ranks []int, mods []*ir.Module, scopes []Scope) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := spmd.RunProgram("main", ranks, mods, scopes)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("the SPMD run still waits after %v", limit)
		return nil
	}
}

// TestSPMDDeadlockIsFound: three ranks each wait in a collective of a
// group whose other member waits in another (0 for 1 on [0 1], 1 for 2
// on [1 2], 2 for 0 on [0 2]), a cycle no member's end breaks. The run
// fails as soon as all three wait (the runner knows how many ranks run),
// not at the deadline, naming a rank, its op and the rank it waited for.
func TestSPMDDeadlockIsFound(t *testing.T) {
	groups := "group 0 ranks [0, 1]\ngroup 1 ranks [1, 2]\ngroup 2 ranks [0, 2]\n"
	prog := func(rank int) string {
		return fmt.Sprintf("%sprogram main rank %d { block 0 {\n var a : f64[2]\n var s : f64[2]\n"+
			" op %d c_allreduce_sum(X: a) -> (Out: s) {ring_id = %d}\n}}", groups, rank, 10+rank, rank)
	}
	mods := rankModules(t, prog(0), prog(1), prog(2))
	scopes := []Scope{{"a": Zeros(ir.F64, 2)}, {"a": Zeros(ir.F64, 2)}, {"a": Zeros(ir.F64, 2)}}
	start := time.Now()
	err := runWithin(t, 20*time.Second, &SPMD{Deadline: time.Minute}, []int{0, 1, 2}, mods, scopes)
	if err == nil {
		t.Fatal("a deadlocked run succeeded")
	}
	// Which rank's error is reported first depends on the order they
	// came to wait; whichever it is, the error is its own wait, with the
	// rank it waited for.
	re := regexp.MustCompile(`rank (\d): op (\d+) c_allreduce_sum on group \[(\d) (\d)\]: deadlock: it waits for ranks \[(\d)\]`)
	sm := re.FindStringSubmatch(err.Error())
	if sm == nil {
		t.Fatalf("err = %v\nwant a deadlock naming the rank, its op and the missing rank", err)
	}
	rank := int(sm[1][0] - '0')
	waitsFor := map[int]string{0: "1", 1: "2", 2: "0"}
	if sm[2] != fmt.Sprint(10+rank) || sm[5] != waitsFor[rank] || !strings.HasPrefix(err.Error(), "rank "+sm[1]+": ") {
		t.Errorf("err = %v\nrank %s should name its op %d and wait for rank %s", err, sm[1], 10+rank, waitsFor[rank])
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the deadlock took %v to report", d)
	}
}

// TestSPMDRankSkipsACollective: rank 1's program ends without the
// collective rank 0 waits in. The run fails at once, long before the
// deadline, naming the op and the rank that never came.
func TestSPMDRankSkipsACollective(t *testing.T) {
	r0 := head + "program main rank 0 { block 0 {\n var a : f64[2]\n var s : f64[2]\n op 1 c_allreduce_sum(X: a) -> (Out: s) {ring_id = 0}\n}}"
	r1 := head + "program main rank 1 { block 0 {\n var a : f64[2]\n var s : f64[2]\n op 1 relu(X: a) -> (Out: s)\n}}"
	mods := rankModules(t, r0, r1)
	start := time.Now()
	err := runWithin(t, 20*time.Second, &SPMD{Deadline: time.Minute}, []int{0, 1}, mods,
		[]Scope{{"a": Zeros(ir.F64, 2)}, {"a": Zeros(ir.F64, 2)}})
	if err == nil || !strings.Contains(err.Error(), "op 1 c_allreduce_sum on group [0 1]") ||
		!strings.Contains(err.Error(), "rank 1 finished its program without joining") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the skipped collective took %v to report", d)
	}
}

// TestSPMDKernelPanicIsAnError: a kernel that panics on one rank fails
// the run with an error naming the rank and the op, and the rank's peer,
// left waiting in a collective, is released; the process goes on. The
// serial interpreter turns the panic into the same error.
func TestSPMDKernelPanicIsAnError(t *testing.T) {
	ks := DefaultKernels()
	ks["explode"] = func(op *ir.Op, in Args) (Args, error) {
		var rows []float64
		_ = rows[len(in["X"][0].Data)] // index out of range
		return nil, nil
	}
	r0 := head + "program main rank 0 { block 0 {\n var a : f64[2]\n var b : f64[2]\n var s : f64[2]\n" +
		" op 1 relu(X: a) -> (Out: b)\n op 2 c_allreduce_sum(X: b) -> (Out: s) {ring_id = 0}\n}}"
	r1 := strings.Replace(strings.Replace(r0, "rank 0", "rank 1", 1), "op 1 relu", "op 1 explode", 1)
	mods := rankModules(t, r0, r1)
	scopes := []Scope{{"a": Zeros(ir.F64, 2)}, {"a": Zeros(ir.F64, 2)}}
	err := runWithin(t, 20*time.Second, &SPMD{Kernels: ks, Deadline: time.Minute}, []int{0, 1}, mods, scopes)
	const want = "rank 1: op 1 explode: kernel panicked: runtime error: index out of range [2] with length 0"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	var kp *KernelPanic
	if !errors.As(err, &kp) || kp.OpID != 1 || len(kp.Stack) == 0 {
		t.Errorf("the error is not a KernelPanic with the op and a stack: %#v", kp)
	}

	serial := mods[1].Clone()
	serial.Main.Rank = -1
	if _, err := Run(serial, Scope{"a": Zeros(ir.F64, 2)}, ks); err == nil || !strings.Contains(err.Error(), "op 1 explode: kernel panicked") {
		t.Errorf("serial: err = %v", err)
	}
}

// TestSPMDRunnerPanicIsAnError: a panic outside any kernel (here the
// interpreter meets a nil op, which no parser makes) fails the run with
// an error naming the rank, and the peer waiting for it is released.
func TestSPMDRunnerPanicIsAnError(t *testing.T) {
	r := head + "program main rank 0 { block 0 {\n var a : f64[2]\n var s : f64[2]\n op 1 c_allreduce_sum(X: a) -> (Out: s) {ring_id = 0}\n}}"
	mods := rankModules(t, r, strings.Replace(r, "rank 0", "rank 1", 1))
	b := mods[1].Main.Global()
	b.Ops = append([]*ir.Op{nil}, b.Ops...)
	err := runWithin(t, 20*time.Second, &SPMD{Deadline: time.Minute}, []int{0, 1}, mods,
		[]Scope{{"a": Zeros(ir.F64, 2)}, {"a": Zeros(ir.F64, 2)}})
	if err == nil || !strings.HasPrefix(err.Error(), "rank 1: panic: runtime error: invalid memory address or nil pointer dereference") {
		t.Fatalf("err = %v", err)
	}
}

// TestSPMDShapeMismatchNamesBothRanks: for each collective whose members
// must contribute alike, rank 1 sends another shape (or dtype) than rank
// 0. The run fails naming both ranks with their op and what each sent,
// never computing with the ragged parts.
func TestSPMDShapeMismatchNamesBothRanks(t *testing.T) {
	cases := []struct {
		op     string // the op, over x
		x0, x1 string // the var declarations of x on ranks 0 and 1
		sig    [2]string
	}{
		{"c_allreduce_sum(X: x) -> (Out: y) {ring_id = 0}", "f64[2, 2]", "f64[2, 3]", [2]string{"f64[2 2]", "f64[2 3]"}},
		{"c_allreduce_max(X: x) -> (Out: y) {ring_id = 0}", "f64[2, 2]", "f32[2, 2]", [2]string{"f64[2 2]", "f32[2 2]"}},
		{"c_broadcast(X: x) -> (Out: y) {ring_id = 0, root = 0}", "f64[2, 2]", "f64[3, 2]", [2]string{"f64[2 2]", "f64[3 2]"}},
		{"c_allgather(X: x) -> (Out: y) {nranks = 2, ring_id = 0}", "f64[2, 2]", "f64[3, 2]", [2]string{"f64[2 2]", "f64[3 2]"}},
		{"c_concat(X: x) -> (Out: y) {ring_id = 0}", "f64[2, 2]", "f64[2, 3]", [2]string{"f64[2 2]", "f64[2 3]"}},
		{"alltoall(X: x) -> (Out: y) {ring_id = 0}", "f64[2, 2]", "f64[4, 2]", [2]string{"f64[2 2]", "f64[4 2]"}},
		{"global_scatter(X: x, local_count: lc, global_count: gc) -> (Out: y) {ring_id = 0}", "f64[2, 2]", "f64[2, 3]",
			[2]string{"f64[*,2] counts 2", "f64[*,3] counts 2"}},
	}
	for _, c := range cases {
		typ, _, _ := strings.Cut(c.op, "(")
		t.Run(typ, func(t *testing.T) {
			prog := func(rank int, x string) string {
				return fmt.Sprintf("%sprogram main rank %d { block 0 {\n var x : %s\n var lc : i64[2]\n var gc : i64[2]\n var y : f64[-1, -1]\n"+
					" op %d %s\n}}", head, rank, x, 5+rank, c.op)
			}
			mods := rankModules(t, prog(0, c.x0), prog(1, c.x1))
			feed := func(decl string) Scope {
				m, err := ir.ParseString("x", "program main { block 0 {\n var x : "+decl+"\n}}")
				noErr(t, err)
				v := m.Main.Global().Var("x")
				return Scope{"x": Zeros(v.Type.DType, v.Type.Shape...), "lc": i64(1, 1), "gc": i64(1, 1)}
			}
			err := runWithin(t, 20*time.Second, &SPMD{Deadline: 10 * time.Second}, []int{0, 1}, mods,
				[]Scope{feed(c.x0), feed(c.x1)})
			if err == nil {
				t.Fatal("ranks that disagree on the shape met")
			}
			want := fmt.Sprintf("collective mismatch on group [0 1]: rank 0 op 5 %s (%s %s) against rank 1 op 6 %s (%s %s)",
				typ, kindOf(typ), c.sig[0], typ, kindOf(typ), c.sig[1])
			if !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v\nwant it to contain %s", err, want)
			}
		})
	}
}

// kindOf is the Call.Kind the runner gives a collective type on ring 0.
func kindOf(typ string) string {
	if typ == "c_broadcast" {
		return "broadcast/0/root0"
	}
	return typ + "/0"
}
