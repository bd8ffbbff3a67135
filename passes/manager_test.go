package passes_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distpass/distpass/internal/par"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

func loadExample(t testing.TB, name string) *ir.Module {
	t.Helper()
	path := filepath.Join("..", "examples", name)
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ir.Parse(path, src)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// breakIR appends an op that reads a var nobody declared.
func breakIR() *passes.Pass {
	return &passes.Pass{
		Name: "break-ir", Doc: "append an op reading an undeclared var, for tests",
		Run: func(_ *passes.Context, m *ir.Module) error {
			b := m.Main.Global()
			b.Ops = append(b.Ops, &ir.Op{ID: m.FreshOpID(), Type: "probe", Inputs: ir.Slots("X", "ghost")})
			return nil
		},
	}
}

func boom() *passes.Pass {
	return &passes.Pass{
		Name: "boom", Doc: "panic, for tests",
		Run: func(*passes.Context, *ir.Module) error {
			var ops []*ir.Op
			_ = ops[3] // index out of range
			return nil
		},
	}
}

func failing() *passes.Pass {
	return &passes.Pass{
		Name: "fail", Doc: "return an error, for tests",
		Run: func(*passes.Context, *ir.Module) error { return errors.New("no good") },
	}
}

// addDeadOp appends a dead relu on a fresh var.
func addDeadOp() *passes.Pass {
	return &passes.Pass{
		Name: "add-dead-op", Doc: "append an op whose output nobody reads, for tests",
		Run: func(ctx *passes.Context, m *ir.Module) error {
			b := ir.NewBuilder(m)
			x := m.Main.Global().Vars()[0]
			name := m.FreshName("dead.tmp")
			b.Var(name, x.Type)
			b.Op("relu", ir.Slots("X", x.Name()), ir.Slots("Out", name))
			ctx.Count("ops-added", 1)
			return b.Err()
		},
	}
}

func run(t testing.TB, r *passes.Registry, text string, m *ir.Module, insts ...passes.Instrument) error {
	t.Helper()
	pl, err := r.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return (&passes.Manager{Instruments: insts}).Run(context.Background(), pl, m)
}

func TestVerifyEachNamesTheBreakingPass(t *testing.T) {
	r := testRegistry(t, breakIR())
	m := loadExample(t, "mlp_dp_mp.dpir")
	err := run(t, r, "dce,break-ir,verify", m, passes.VerifyEach{})
	want := `pass break-ir (execution 2 of "dce,break-ir,verify"): broke the IR: main block 0: op 12 probe: input X names undeclared var ghost`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	var pe *passes.PassError
	if !errors.As(err, &pe) || pe.Exec.Step.Pass.Name != "break-ir" || pe.Exec.N != 2 {
		t.Fatalf("error does not name the pass: %#v", pe)
	}
	// Without verify-each the break goes unnoticed until the verify pass.
	m = loadExample(t, "mlp_dp_mp.dpir")
	err = run(t, r, "break-ir,dce,verify", m)
	if err == nil || !strings.HasPrefix(err.Error(), `pass verify (execution 3 of "break-ir,dce,verify"): main block 0: op 12 probe`) {
		t.Fatalf("err = %v", err)
	}
	// An invalid input is reported as such, not blamed on a pass.
	bad := loadExample(t, "mlp_dp_mp.dpir")
	bad.Main.Global().Ops[0].Inputs[0].Args[0] = "nope"
	err = run(t, r, "dce", bad, passes.VerifyEach{})
	if err == nil || !strings.HasPrefix(err.Error(), "input module does not verify: main block 0: op 1 matmul_v2: input X names undeclared var nope\ninput module does not verify: main block 0: op 1 matmul_v2: dist input x: not an input of the op") {
		t.Fatalf("err = %v", err)
	}
}

func TestPrintBeforeAfter(t *testing.T) {
	r := testRegistry(t, addDeadOp())
	m := loadExample(t, "while_loop.dpir")
	input := string(ir.Print(m))
	var buf bytes.Buffer
	err := run(t, r, "add-dead-op,dce{keep=x},verify", m, &passes.PrintIR{W: &buf, Before: []string{"dce"}, After: []string{"all"}})
	if err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	// Four dumps in order, each headed by the exact step.
	var headers []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "# IR ") {
			headers = append(headers, line)
		}
	}
	want := []string{
		"# IR after add-dead-op (#1)",
		"# IR before dce{keep=x} (#2)",
		"# IR after dce{keep=x} (#2)",
		"# IR after verify (#3)",
	}
	if strings.Join(headers, "\n") != strings.Join(want, "\n") {
		t.Fatalf("headers:\n%s\nwant:\n%s", strings.Join(headers, "\n"), strings.Join(want, "\n"))
	}
	// The dump after dce is the input again: dce removed the dead op.
	after := strings.SplitN(out, "# IR after dce{keep=x} (#2)\n", 2)[1]
	after = strings.SplitN(after, "# IR after verify", 2)[0]
	if after != input {
		t.Errorf("module after dce differs from the input:\n%s", after)
	}
	if !strings.Contains(out, "op 9 relu(X: x) -> (Out: dead.tmp_0)") {
		t.Errorf("dump after add-dead-op lacks the added op:\n%s", out)
	}
}

func TestPrintChanged(t *testing.T) {
	r := testRegistry(t, addDeadOp())
	m := loadExample(t, "while_loop.dpir")
	var buf bytes.Buffer
	if err := run(t, r, "verify,add-dead-op,verify,dce,verify", m, &passes.PrintChanged{W: &buf}); err != nil {
		t.Fatal(err)
	}
	want := `# IR changed by add-dead-op (#2)
diff before add-dead-op (#2) after add-dead-op (#2)
--- before add-dead-op (#2)
+++ after add-dead-op (#2)
@@ -7,10 +7,12 @@
     var n : i64[1]
     var cond : bool[1]
     var scopes : step_scopes
+    var dead.tmp_0 : f32[4, 8]
     op 1 fill_constant() -> (Out: i) {dtype = 3, shape = [1], value = 0.0} role forward
     op 2 fill_constant() -> (Out: n) {dtype = 3, shape = [1], value = 10.0} role forward
     op 3 less_than(X: i, Y: n) -> (Out: cond) role forward
     op 4 while(X: [x, i, n], Condition: cond) -> (Out: [x, i], StepScopes: scopes) {is_test = false, sub_block = ^1} role forward
+    op 9 relu(X: x) -> (Out: dead.tmp_0) role forward
   }
   block 1 parent 0 {
     var x_next : f32[4, 8]
# IR changed by dce (#4)
diff before dce (#4) after dce (#4)
--- before dce (#4)
+++ after dce (#4)
@@ -7,12 +7,10 @@
     var n : i64[1]
     var cond : bool[1]
     var scopes : step_scopes
-    var dead.tmp_0 : f32[4, 8]
     op 1 fill_constant() -> (Out: i) {dtype = 3, shape = [1], value = 0.0} role forward
     op 2 fill_constant() -> (Out: n) {dtype = 3, shape = [1], value = 10.0} role forward
     op 3 less_than(X: i, Y: n) -> (Out: cond) role forward
     op 4 while(X: [x, i, n], Condition: cond) -> (Out: [x, i], StepScopes: scopes) {is_test = false, sub_block = ^1} role forward
-    op 9 relu(X: x) -> (Out: dead.tmp_0) role forward
   }
   block 1 parent 0 {
     var x_next : f32[4, 8]
`
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// fakeClock advances by step on every reading.
func fakeClock(step time.Duration) func() time.Time {
	t := time.Unix(0, 0)
	return func() time.Time {
		t = t.Add(step)
		return t
	}
}

func TestTimePasses(t *testing.T) {
	r := testRegistry(t)
	m := loadExample(t, "mlp_dp_mp.dpir")
	var buf bytes.Buffer
	tp := &passes.TimePasses{W: &buf, Now: fakeClock(time.Millisecond)}
	if err := run(t, r, "verify,repeat{count=2}(dce),verify", m, tp); err != nil {
		t.Fatal(err)
	}
	// Every clock reading is 1ms after the previous one: the pipeline
	// start, then start and end of each execution, then the end: 11ms.
	want := `pass timing (wall) for verify,repeat{count=2}(dce),verify
        time      %  pass
     1.000ms    9.1  verify (#1)
     5.000ms   45.5  repeat{count=2} (#2)
     1.000ms    9.1    dce (#3)
     1.000ms    9.1    dce (#4)
     1.000ms    9.1  verify (#5)
    11.000ms  100.0  total
`
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestCounters(t *testing.T) {
	r := testRegistry(t, addDeadOp())
	m := loadExample(t, "mlp_dp_mp.dpir")
	var buf bytes.Buffer
	if err := run(t, r, "add-dead-op,add-dead-op,verify,dce,canonicalize-names", m, &passes.Counters{W: &buf}); err != nil {
		t.Fatal(err)
	}
	want := `pass counters for add-dead-op,add-dead-op,verify,dce,canonicalize-names
  added removed changed  pass
      1       0       0  add-dead-op (#1) ops-added=1
      1       0       0  add-dead-op (#2) ops-added=1
      0       0       0  verify (#3)
      0       2       0  dce (#4) ops-removed=2 vars-removed=2
      0       0       0  canonicalize-names (#5) vars-renamed=0
`
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestBisectLimit(t *testing.T) {
	r := testRegistry(t, addDeadOp())
	m := loadExample(t, "mlp_dp_mp.dpir")
	var buf bytes.Buffer
	var ran []string
	rec := &recorder{ran: &ran}
	err := run(t, r, "add-dead-op,add-dead-op,repeat{count=2}(add-dead-op),verify,add-dead-op", m, &passes.Bisect{Limit: 2, W: &buf}, rec)
	if err != nil {
		t.Fatal(err)
	}
	wantSkipped := "bisect-limit=2: skipped repeat{count=2} (#3)\nbisect-limit=2: skipped add-dead-op (#5)\n"
	if buf.String() != wantSkipped {
		t.Errorf("skipped:\n%s\nwant:\n%s", buf.String(), wantSkipped)
	}
	// verify (#4) is Required: it runs beyond the limit.
	if got := strings.Join(ran, ","); got != "add-dead-op#1,add-dead-op#2,verify#4" {
		t.Errorf("ran %s", got)
	}
	if n := len(m.Main.Global().Ops); n != 13 {
		t.Errorf("%d ops, want 11 + 2 added", n)
	}
}

type recorder struct {
	passes.NopInstrument
	ran *[]string
}

func (r *recorder) BeforePass(e *passes.Execution, _ *ir.Module) error {
	*r.ran = append(*r.ran, e.Step.Pass.Name+"#"+itoa(e.N))
	return nil
}

func TestDumpDir(t *testing.T) {
	r := testRegistry(t, addDeadOp())
	m := loadExample(t, "mlp_dp_mp.dpir")
	dir := t.TempDir()
	render := func(p *ir.Program) []byte { return []byte("digraph " + p.Name + " {}\n") }
	if err := run(t, r, "add-dead-op,dce", m, &passes.DumpDir{Dir: dir, Render: render}); err != nil {
		t.Fatal(err)
	}
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := "00-input.dpir 00-input.main.dot 00-input.startup.dot 01-add-dead-op.dpir 01-add-dead-op.main.dot 01-add-dead-op.startup.dot 02-dce.dpir 02-dce.main.dot 02-dce.startup.dot"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("files: %s\nwant:  %s", got, want)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "01-add-dead-op.dpir"))
	if !strings.Contains(string(after), "dead.tmp_0") {
		t.Error("dump after add-dead-op lacks its var")
	}
	final, _ := os.ReadFile(filepath.Join(dir, "02-dce.dpir"))
	if !bytes.Equal(final, ir.Print(m)) {
		t.Error("last dump is not the final module")
	}
	dot, _ := os.ReadFile(filepath.Join(dir, "02-dce.startup.dot"))
	if string(dot) != "digraph startup {}\n" {
		t.Errorf("dot = %q", dot)
	}
}

func TestReproducerReplaysAPanic(t *testing.T) {
	r := testRegistry(t, boom(), addDeadOp())
	m := loadExample(t, "mlp_dp_mp.dpir")
	input := ir.Print(m)
	path := filepath.Join(t.TempDir(), "repro.dpir")
	err := run(t, r, "add-dead-op,boom,verify", m, &passes.Reproducer{Path: path})
	var pe *passes.PassError
	if !errors.As(err, &pe) || pe.Panic == nil {
		t.Fatalf("err = %v, want a panic as *PassError", err)
	}
	wantMsg := `pass boom (execution 2 of "add-dead-op,boom,verify"): panic: runtime error: index out of range [3] with length 0 (reproducer: ` + path + `)`
	if err.Error() != wantMsg {
		t.Fatalf("err = %v\nwant %s", err, wantMsg)
	}
	if !bytes.Contains(pe.Stack, []byte("boom.func1")) {
		t.Error("stack does not show the panicking pass")
	}
	data, rerr := os.ReadFile(path)
	if rerr != nil {
		t.Fatal(rerr)
	}
	text, m2, rerr := passes.ReadReproducer(path, data)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if text != "add-dead-op,boom,verify" {
		t.Errorf("pipeline = %q", text)
	}
	if !bytes.Equal(ir.Print(m2), input) {
		t.Error("reproducer module is not the input as it was before the pipeline")
	}
	// Replaying fails the same way.
	err2 := run(t, r, text, m2)
	if err2 == nil || !strings.HasPrefix(err2.Error(), `pass boom (execution 2 of "add-dead-op,boom,verify"): panic: runtime error: index out of range [3] with length 0`) {
		t.Fatalf("replay: %v", err2)
	}
	// A plain error is caught too, and names the pass.
	err3 := run(t, testRegistry(t, failing()), "verify,fail", loadExample(t, "mlp_dp_mp.dpir"))
	if err3 == nil || err3.Error() != `pass fail (execution 2 of "verify,fail"): no good` {
		t.Fatalf("err = %v", err3)
	}
	if _, _, err := passes.ReadReproducer("x", []byte("module m")); err == nil || !strings.Contains(err.Error(), "not a distpass reproducer") {
		t.Errorf("ReadReproducer on a plain module: %v", err)
	}
	// ParseReproducer parses the pipeline too; a bad one is an error at
	// its place in the file.
	pl, _, perr := passes.ParseReproducer(r, path, data)
	if perr != nil || pl.String() != text {
		t.Errorf("ParseReproducer = %v, %v; want %s", pl, perr, text)
	}
	bad := bytes.Replace(data, []byte("# pipeline: add-dead-op,boom"), []byte("# pipeline: add-dead-op,bom"), 1)
	_, _, perr = passes.ParseReproducer(r, "r.dpir", bad)
	var pos *ir.ParseError
	if !errors.As(perr, &pos) || perr.Error() != `r.dpir:2:25: unknown pass "bom" (did you mean boom?)` {
		t.Errorf("ParseReproducer of a bad pipeline = %v (%T)", perr, perr)
	}
}

func TestCancel(t *testing.T) {
	r := testRegistry(t)
	pl := r.MustParse("verify,verify")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := (&passes.Manager{}).Run(ctx, pl, loadExample(t, "mlp_dp_mp.dpir"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

// A panic on a worker core (par.Do) reaches the manager as the pass's
// panic, with the worker's value and stack.
func TestPanicOnAWorkerIsThePasses(t *testing.T) {
	boom := &passes.Pass{Name: "boom", Doc: "panic on a worker, for tests",
		Run: func(*passes.Context, *ir.Module) error {
			par.Do(8, 2, func(i int) {
				if i == 5 {
					panic("worker five")
				}
			})
			return nil
		}}
	r := testRegistry(t, boom)
	err := run(t, r, "boom", loadExample(t, "mlp_dp_mp.dpir"))
	var pe *passes.PassError
	if !errors.As(err, &pe) || pe.Panic != "worker five" || !strings.Contains(string(pe.Stack), "TestPanicOnAWorkerIsThePasses") {
		t.Fatalf("err = %v (panic %v)", err, pe)
	}
	if want := `pass boom (execution 1 of "boom"): panic: worker five`; err.Error() != want {
		t.Fatalf("err = %q, want %q", err, want)
	}
}
