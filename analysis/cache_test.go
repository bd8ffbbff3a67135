package analysis_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/ir"
)

// counting is an analyzer that counts its runs and returns its name and
// the results of its requirements, so that tests see what it was given.
type counting struct {
	*analysis.Analyzer
	runs atomic.Int32
}

func newCounting(name string, requires ...*counting) *counting {
	c := &counting{}
	c.Analyzer = &analysis.Analyzer{
		Name: name,
		Doc:  "A test analyzer that counts its runs.",
		Run: func(p *analysis.Inputs) (any, error) {
			c.runs.Add(1)
			s := name
			for _, r := range p.Analyzer.Requires {
				s += "(" + p.Result(r).(string) + ")"
			}
			return s, nil
		},
	}
	for _, r := range requires {
		c.Requires = append(c.Requires, r.Analyzer)
	}
	return c
}

func TestCacheComputesOnce(t *testing.T) {
	a := newCounting("a")
	c := analysis.NewCache(ir.NewModule("m"))
	if c.Cached(a.Analyzer) {
		t.Fatal("cached before the first Get")
	}
	for range 3 {
		r, err := analysis.Get[string](c, a.Analyzer)
		if err != nil || r != "a" {
			t.Fatalf("Get = %q, %v; want \"a\", nil", r, err)
		}
	}
	if n := a.runs.Load(); n != 1 {
		t.Errorf("Run called %d times, want 1", n)
	}
	if !c.Cached(a.Analyzer) {
		t.Error("not cached after Get")
	}
	wantStats(t, c, "a 2/1")
}

// wantStats compares the cache's counters, written "name hits/misses".
func wantStats(t *testing.T, c *analysis.Cache, want ...string) {
	t.Helper()
	var got []string
	for _, st := range c.Stats() {
		got = append(got, fmt.Sprintf("%s %d/%d", st.Name, st.Hits, st.Misses))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

func TestCacheRequires(t *testing.T) {
	c1 := newCounting("c")
	b := newCounting("b", c1)
	a := newCounting("a", b, c1)
	c := analysis.NewCache(ir.NewModule("m"))
	if got := get[string](t, c, a.Analyzer); got != "a(b(c))(c)" {
		t.Errorf("a = %q, want a(b(c))(c)", got)
	}
	if got := get[string](t, c, b.Analyzer); got != "b(c)" {
		t.Errorf("b = %q, want b(c)", got)
	}
	for _, x := range []*counting{a, b, c1} {
		if n := x.runs.Load(); n != 1 {
			t.Errorf("%s ran %d times, want 1", x.Name, n)
		}
	}
	// c: asked by b, then by a; b: by a, then by the test.
	wantStats(t, c, "a 0/1", "b 1/1", "c 1/1")
}

func TestInvalidate(t *testing.T) {
	// a requires b requires c; d stands alone.
	setup := func(t *testing.T) (*analysis.Cache, map[string]*counting) {
		cc := newCounting("c")
		b := newCounting("b", cc)
		a := newCounting("a", b)
		d := newCounting("d")
		c := analysis.NewCache(ir.NewModule("m"))
		for _, x := range []*counting{a, d} {
			get[string](t, c, x.Analyzer)
		}
		return c, map[string]*counting{"a": a, "b": b, "c": cc, "d": d}
	}
	cached := func(c *analysis.Cache, xs map[string]*counting) string {
		s := ""
		for _, n := range []string{"a", "b", "c", "d"} {
			if c.Cached(xs[n].Analyzer) {
				s += n
			}
		}
		return s
	}
	for _, tc := range []struct {
		name      string
		preserved []string
		want      string // the names still cached
	}{
		{"nothing preserved", nil, ""},
		{"one preserved", []string{"d"}, "d"},
		{"chain preserved", []string{"a", "b", "c"}, "abc"},
		{"leaf preserved", []string{"c"}, "c"},
		{"requirement dropped", []string{"a", "c", "d"}, "cd"},
		{"transitive requirement dropped", []string{"a", "b", "d"}, "d"},
		{"everything preserved", []string{"a", "b", "c", "d"}, "abcd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, xs := setup(t)
			var keep []*analysis.Analyzer
			for _, n := range tc.preserved {
				keep = append(keep, xs[n].Analyzer)
			}
			c.Invalidate(keep...)
			if got := cached(c, xs); got != tc.want {
				t.Errorf("cached after Invalidate(%v) = %q, want %q", tc.preserved, got, tc.want)
			}
			// A dropped result is computed again, a kept one is not.
			get[string](t, c, xs["a"].Analyzer)
			get[string](t, c, xs["d"].Analyzer)
			for n, x := range xs {
				want := int32(1)
				if !contains(tc.want, n) {
					want = 2
				}
				if got := x.runs.Load(); got != want {
					t.Errorf("%s ran %d times, want %d", n, got, want)
				}
			}
		})
	}
}

func contains(s string, n string) bool {
	for i := range len(s) {
		if s[i:i+1] == n {
			return true
		}
	}
	return false
}

func TestInvalidateAll(t *testing.T) {
	b := newCounting("b")
	a := newCounting("a", b)
	c := analysis.NewCache(ir.NewModule("m"))
	get[string](t, c, a.Analyzer)
	c.InvalidateAll()
	if c.Cached(a.Analyzer) || c.Cached(b.Analyzer) {
		t.Fatal("cached after InvalidateAll")
	}
	get[string](t, c, a.Analyzer)
	if a.runs.Load() != 2 || b.runs.Load() != 2 {
		t.Errorf("runs a=%d b=%d, want 2 and 2", a.runs.Load(), b.runs.Load())
	}
}

func TestSetModule(t *testing.T) {
	m1, m2 := ir.NewModule("one"), ir.NewModule("two")
	name := &analysis.Analyzer{
		Name: "module-name",
		Doc:  "The module's name.",
		Run:  func(p *analysis.Inputs) (any, error) { return p.Module.Name, nil },
	}
	c := analysis.NewCache(m1)
	if got := get[string](t, c, name); got != "one" {
		t.Fatalf("got %q, want one", got)
	}
	c.SetModule(m2)
	if c.Cached(name) {
		t.Error("cached after SetModule")
	}
	if c.Module() != m2 {
		t.Error("Module() is not the new module")
	}
	if got := get[string](t, c, name); got != "two" {
		t.Errorf("got %q, want two", got)
	}
	wantStats(t, c, "module-name 0/2")
}

func TestCacheKeepsErrors(t *testing.T) {
	boom := errors.New("boom")
	var runs atomic.Int32
	failing := &analysis.Analyzer{
		Name: "failing",
		Doc:  "Always fails.",
		Run: func(*analysis.Inputs) (any, error) {
			runs.Add(1)
			return nil, boom
		},
	}
	dependent := newCounting("dependent")
	dependent.Requires = []*analysis.Analyzer{failing}
	c := analysis.NewCache(ir.NewModule("m"))
	for range 2 {
		_, err := c.Get(failing)
		if !errors.Is(err, boom) || err.Error() != "failing: boom" {
			t.Errorf("Get(failing) = %v, want failing: boom", err)
		}
		_, err = c.Get(dependent.Analyzer)
		if !errors.Is(err, boom) || err.Error() != "dependent: failing: boom" {
			t.Errorf("Get(dependent) = %v, want dependent: failing: boom", err)
		}
	}
	if runs.Load() != 1 || dependent.runs.Load() != 0 {
		t.Errorf("runs failing=%d dependent=%d, want 1 and 0", runs.Load(), dependent.runs.Load())
	}
	if !c.Cached(failing) {
		t.Error("the error is not cached")
	}
	c.Invalidate()
	c.Get(failing)
	if runs.Load() != 2 {
		t.Errorf("failing ran %d times after Invalidate, want 2", runs.Load())
	}
}

func TestGetWrongType(t *testing.T) {
	a := newCounting("a")
	c := analysis.NewCache(ir.NewModule("m"))
	n, err := analysis.Get[*analysis.DefUseInfo](c, a.Analyzer)
	if n != nil || err == nil || err.Error() != "a: result is string, not *analysis.DefUseInfo" {
		t.Errorf("Get = %v, %v; want nil, a: result is string, not *analysis.DefUseInfo", n, err)
	}
}

func TestGetInvalidAnalyzer(t *testing.T) {
	a := &analysis.Analyzer{Name: "a", Doc: "A.", Run: func(*analysis.Inputs) (any, error) { return 1, nil }}
	b := &analysis.Analyzer{Name: "b", Doc: "B.", Run: a.Run, Requires: []*analysis.Analyzer{a}}
	a.Requires = []*analysis.Analyzer{b}
	c := analysis.NewCache(ir.NewModule("m"))
	if _, err := c.Get(a); err == nil || err.Error() != "analyzers form a cycle: a -> b -> a" {
		t.Errorf("Get(cyclic) = %v", err)
	}
	if _, err := c.Get(nil); err == nil || err.Error() != "analysis: Get of a nil analyzer" {
		t.Errorf("Get(nil) = %v", err)
	}
	if c.Cached(a) || len(c.Stats()) != 0 {
		t.Error("an invalid analyzer left a trace in the cache")
	}
}

// Two analyzer values with one name are one analysis.
func TestCacheKeyIsName(t *testing.T) {
	if analysis.LocalShapes(3) != analysis.LocalShapes(3) {
		t.Error("LocalShapes(3) returns different analyzers")
	}
	a1, a2 := newCounting("same"), newCounting("same")
	c := analysis.NewCache(ir.NewModule("m"))
	get[string](t, c, a1.Analyzer)
	get[string](t, c, a2.Analyzer)
	if a1.runs.Load()+a2.runs.Load() != 1 {
		t.Errorf("runs %d and %d, want one run in all", a1.runs.Load(), a2.runs.Load())
	}
}

func TestPassResultNotRequired(t *testing.T) {
	other := newCounting("other")
	a := &analysis.Analyzer{
		Name: "greedy",
		Doc:  "Asks for what it does not require.",
		Run:  func(p *analysis.Inputs) (any, error) { return p.Result(other.Analyzer), nil },
	}
	defer func() {
		if r := recover(); r != "analysis greedy: Result of other, which is not in Requires" {
			t.Errorf("recovered %v", r)
		}
	}()
	analysis.NewCache(ir.NewModule("m")).Get(a)
	t.Error("no panic")
}

// A panic in Run goes up to the caller and leaves nothing in the cache.
func TestRunPanics(t *testing.T) {
	var runs int
	a := &analysis.Analyzer{
		Name: "panicky",
		Doc:  "Panics once.",
		Run: func(*analysis.Inputs) (any, error) {
			runs++
			if runs == 1 {
				panic("first run")
			}
			return "second run", nil
		},
	}
	c := analysis.NewCache(ir.NewModule("m"))
	func() {
		defer func() {
			if r := recover(); r != "first run" {
				t.Errorf("recovered %v, want first run", r)
			}
		}()
		c.Get(a)
	}()
	if c.Cached(a) {
		t.Error("a panic was cached")
	}
	if got := get[string](t, c, a); got != "second run" {
		t.Errorf("got %q", got)
	}
}

// Concurrent Gets run each analysis once; run with -race.
func TestCacheConcurrent(t *testing.T) {
	base := newCounting("base")
	var mids []*counting
	for i := range 4 {
		mids = append(mids, newCounting(fmt.Sprintf("mid-%d", i), base))
	}
	c := analysis.NewCache(ir.NewModule("m"))
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			x := mids[g%len(mids)]
			if got, err := analysis.Get[string](c, x.Analyzer); err != nil || got != x.Name+"(base)" {
				t.Errorf("Get(%s) = %q, %v", x.Name, got, err)
			}
			c.Stats()
			c.Cached(base.Analyzer)
		})
	}
	wg.Wait()
	if n := base.runs.Load(); n != 1 {
		t.Errorf("base ran %d times", n)
	}
	for _, x := range mids {
		if n := x.runs.Load(); n != 1 {
			t.Errorf("%s ran %d times", x.Name, n)
		}
	}
	total := 0
	for _, st := range c.Stats() {
		total += st.Hits + st.Misses
	}
	if total != 32+4 { // 32 Gets, and each mid asks for base once
		t.Errorf("hits+misses = %d, want 36", total)
	}
}

// The analyses only read the module: caches in several goroutines may
// analyse one module at once. Run with -race.
func TestCachesShareModule(t *testing.T) {
	m := example(t, "mlp_dp_mp.dpir")
	var wg sync.WaitGroup
	for rank := range 4 {
		wg.Go(func() {
			c := analysis.NewCache(m)
			for _, a := range []*analysis.Analyzer{analysis.DefUse, analysis.Roles, analysis.GradMaps,
				analysis.Annotations, analysis.LocalShapes(rank)} {
				if _, err := c.Get(a); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}
