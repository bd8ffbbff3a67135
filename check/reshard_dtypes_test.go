package check_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/interop/paddle"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/passes"
)

// TestReshardPairsDTypes: the reshard pairs of TestReshardPairs (every
// pair of dists of an [8, 12] tensor on the mesh [4], with sums,
// averages, maxima and minima, and every third pair on [2, 2], there in
// descending rank order) for the dtypes f32, f64, i32, i64 and bool
// (issue 37, finding 4). A pair whose source or destination is an
// average of integer or bool parts, or a sum of bool parts, is refused
// by partition, naming the op, the var, the dtype and why; every other
// pair (bools partial by max and min: or and and) is proven by check,
// exactly (a tolerance of none) on the integers and bools, and no
// per-rank program fills an integer or a bool with a value the dtype
// does not hold (±inf) or scales one.
func TestReshardPairsDTypes(t *testing.T) {
	type meshCase struct {
		shape []int
		ranks string
		every int
	}
	accepted, refused := 0, 0
	for _, mc := range []meshCase{{[]int{4}, "[0, 1, 2, 3]", 1}, {[]int{2, 2}, "[3, 2, 1, 0]", 3}} {
		dists := pairDists(2, len(mc.shape))
		i := 0
		for _, src := range dists {
			for _, dst := range dists {
				i++
				if (i-1)%mc.every != 0 {
					continue
				}
				for _, dt := range []string{"f32", "f64", "i32", "i64", "bool"} {
					text := pairModule(mc.shape, []int64{8, 12}, src, dst)
					text = strings.ReplaceAll(text, "f64[", dt+"[")
					text = strings.Replace(text, "ranks [0, 1, 2, 3]", "ranks "+mc.ranks, 1)
					name := fmt.Sprintf("mesh %v ranks %s %s: %s → %s", mc.shape, mc.ranks, dt, src.text(), dst.text())
					both := src.text() + dst.text()
					refuse := strings.Contains(both, "avg") && dt != "f32" && dt != "f64" ||
						strings.Contains(both, "sum") && dt == "bool"
					if err := dtypePair(t, text, dt, refuse); err != nil {
						t.Errorf("%s: %v", name, err)
						continue
					}
					if refuse {
						refused++
					} else {
						accepted++
					}
				}
			}
		}
	}
	t.Logf("%d pairs proven by check, %d refused", accepted, refused)
}

// dtypePair partitions and checks one pair's module of dtype dt, and
// returns why it is wrong: refused when it should pass, or passed (or
// refused without naming what) when it should be refused.
func dtypePair(t *testing.T, text, dt string, wantRefused bool) error {
	t.Helper()
	m, err := ir.Parse("pair.dpir", []byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	passes.InsertReshards(m)
	ctx := context.Background()
	mods, err := passes.PartitionAll(ctx, m, nil)
	if wantRefused {
		// check-annotations refuses it first, naming the var; the
		// lowering, on its own, too, naming the reshard op.
		if err == nil {
			return fmt.Errorf("partitioned, want a refusal of the partial %s", dt)
		}
		why := " of " + dt + " cannot be exact"
		if msg := err.Error(); !strings.Contains(msg, why) || !strings.Contains(msg, "var y") && !strings.Contains(msg, "var x") {
			return fmt.Errorf("refused with %q, which does not name the var and %q", msg, why)
		}
		lm := m.Clone()
		if err := passes.PartitionVars(lm, passes.Ranks(lm)[0]); err != nil {
			return err
		}
		_, err = lower.DefaultRegistry().Lower(lm, lower.ForwardPhase)
		if err == nil {
			return fmt.Errorf("lowered, want a refusal of the partial %s", dt)
		}
		msg := err.Error()
		if !strings.Contains(msg, why) || !strings.Contains(msg, "reshard: lower-forward: x "+dt+"[") && !strings.Contains(msg, "reshard: lower-forward: y "+dt+"[") {
			return fmt.Errorf("lowering refused with %q, which does not name the op, the var and %q", msg, why)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("partition: %v", err)
	}
	float := dt == "f32" || dt == "f64"
	for r, rm := range mods {
		if err := ir.Verify(rm); err != nil {
			return fmt.Errorf("rank %d: %v", r, err)
		}
		if float {
			continue
		}
		for _, op := range rm.Main.Global().Ops {
			switch op.Type {
			case "fill_any_like", "fill_constant":
				if v, ok := op.Attrs.Get("value").(ir.Float); ok && !fitsDType(float64(v), dt) {
					return fmt.Errorf("rank %d: %s fills %s with %v", r, op, dt, v)
				}
			case "scale":
				return fmt.Errorf("rank %d: %s scales a %s", r, op, dt)
			}
		}
	}
	opts := check.Options{}
	if !float {
		opts.Tol = math.SmallestNonzeroFloat64 // exact
	}
	rep, err := check.RunParts(ctx, m, passes.Ranks(m), mods, opts)
	if err == nil {
		err = rep.Err()
	}
	if err != nil {
		return fmt.Errorf("check: %v", err)
	}
	if rep.Count("activation") == 0 {
		return fmt.Errorf("check compared nothing")
	}
	return nil
}

// fitsDType reports whether v is a value of dtype dt (an integer in its
// range, 0 or 1 for bool).
func fitsDType(v float64, dt string) bool {
	if math.IsInf(v, 0) || math.IsNaN(v) || v != math.Trunc(v) {
		return false
	}
	switch dt {
	case "bool":
		return v == 0 || v == 1
	case "i32":
		return v >= math.MinInt32 && v <= math.MaxInt32
	}
	return v >= math.MinInt64 && v <= math.MaxInt64
}

// TestReshardUnknownDim: a gather and an all-to-all along a dim of
// unknown size (-1) declare it -1 on every rank, never -2 (issue 37,
// finding 4): each rank's program verifies and goes to Paddle files and
// back (the sidecar of partition -all -format pdmodel) into an equal
// module; a slice along such a dim is refused, naming the var.
func TestReshardUnknownDim(t *testing.T) {
	const text = `module unknown_dim
mesh m shape [2] dims [a] ranks [1, 0]
program main {
  block 0 {
    var x : f32[-1, 6] @m[0, -1] {is_data, stop_gradient}
    var y : f32[-1, 6] @m[-1, -1]
    var z : f32[-1, 6] @m[-1, 0]
    var w : f32[-1, 6] @m[-1, 0]
    op 1 reshard(X: x) -> (Out: y) role forward
         dist @m impl reshard:0 [x: [0, -1] -> y: [-1, -1]]
    op 2 reshard(X: x) -> (Out: z) role forward
         dist @m impl reshard:0 [x: [0, -1] -> z: [-1, 0]]
    op 3 assign(X: z) -> (Out: w) role forward
         dist @m impl elementwise:0 [z: [-1, 0] -> w: [-1, 0]]
  }
}
`
	m, err := ir.Parse("unknown_dim.dpir", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(m); err != nil {
		t.Fatal(err)
	}
	mods, err := passes.PartitionAll(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	for r, rm := range mods {
		printed := string(ir.Print(rm))
		if err := ir.Verify(rm); err != nil {
			t.Errorf("rank %d: %v\n%s", r, err, printed)
		}
		if strings.Contains(printed, "[-2") || strings.Contains(printed, ", -2") {
			t.Errorf("rank %d declares a dim of -2:\n%s", r, printed)
		}
		f, err := paddle.ExportFiles(rm, paddle.ExportOptions{Sidecar: true, Startup: rm.Startup != nil})
		if err != nil {
			t.Fatalf("rank %d: export: %v", r, err)
		}
		back, err := paddle.ImportFiles(fmt.Sprintf("rank%d.pdmodel", r), fmt.Sprintf("rank%d.startup.pdmodel", r), f)
		if err != nil {
			t.Fatalf("rank %d: import: %v", r, err)
		}
		if err := ir.Verify(back); err != nil {
			t.Errorf("rank %d: imported: %v", r, err)
		}
		if got := string(ir.Print(back)); got != printed {
			t.Errorf("rank %d: exported and imported:\n%s\nwant\n%s", r, got, printed)
		}
	}
	// A slice along the unknown dim cannot be static: refused.
	sliced := strings.NewReplacer("x : f32[-1, 6] @m[0, -1]", "x : f32[-1, 6] @m[-1, -1]", "[x: [0, -1] ->", "[x: [-1, -1] ->").Replace(text)
	sliced = strings.Replace(sliced, "var y : f32[-1, 6] @m[-1, -1]", "var y : f32[-1, 6] @m[0, -1]", 1)
	sliced = strings.Replace(sliced, "-> y: [-1, -1]]", "-> y: [0, -1]]", 1)
	m, err = ir.Parse("sliced.dpir", []byte(sliced))
	if err != nil {
		t.Fatal(err)
	}
	_, err = passes.PartitionAll(context.Background(), m, nil)
	if err == nil || !strings.Contains(err.Error(), "op 1 reshard") || !strings.Contains(err.Error(), "unknown size") {
		t.Errorf("a slice along a dim of unknown size: %v", err)
	}
}

// TestPartialDTypeRefusedEarly: a var declared partial by a reduction
// that is not exact on its dtype (an i32 by avg, a bool by sum) is
// refused before any lowering, by check-annotations and by complete,
// naming the var, its dtype and why (issue 37, finding 4).
func TestPartialDTypeRefusedEarly(t *testing.T) {
	for _, c := range []struct{ dt, reduce string }{{"i32", "avg"}, {"i64", "avg"}, {"bool", "avg"}, {"bool", "sum"}} {
		text := fmt.Sprintf(`module early
mesh m shape [2] dims [a] ranks [0, 1]
program main {
  block 0 {
    var x : %[1]s[4, 6] @m[-1, -1] partial [0:%[2]s] {is_data, stop_gradient}
    var y : %[1]s[4, 6] @m[-1, -1]
    op 1 reshard(X: x) -> (Out: y) role forward
         dist @m impl reshard:0 [x: [-1, -1] -> y: [-1, -1]]
  }
}
`, c.dt, c.reduce)
		m, err := ir.Parse("early.dpir", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"x", c.dt, "partial " + c.reduce + " of " + c.dt + " cannot be exact"}
		pl, err := passes.DefaultRegistry().Parse("check-annotations")
		if err != nil {
			t.Fatal(err)
		}
		err = (&passes.Manager{}).Run(context.Background(), pl, m.Clone())
		if err == nil || !containsAll(err.Error(), want) {
			t.Errorf("%s by %s: check-annotations: %v, want it to name %q", c.dt, c.reduce, err, want)
		}
		_, err = complete.Complete(m.Clone(), complete.Options{})
		if err == nil || !containsAll(err.Error(), want) {
			t.Errorf("%s by %s: complete: %v, want it to name %q", c.dt, c.reduce, err, want)
		}
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
