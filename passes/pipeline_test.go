package passes_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// testRegistry is the default registry plus passes made for tests.
func testRegistry(t testing.TB, extra ...*passes.Pass) *passes.Registry {
	t.Helper()
	ps := passes.DefaultRegistry().Passes()
	ps = append(ps, extra...)
	r, err := passes.NewRegistry(ps, passes.DefaultRegistry().OrderRules())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func noop(name string) *passes.Pass {
	return &passes.Pass{
		Name: name, Doc: "does nothing, for tests",
		Options: []passes.Option{
			{Name: "n", Kind: passes.OptInt, Default: "0", Doc: "a number"},
			{Name: "flag", Kind: passes.OptBool, Default: "false", Doc: "a flag"},
			{Name: "ratio", Kind: passes.OptFloat, Default: "0.5", Doc: "a ratio"},
			{Name: "name", Kind: passes.OptString, Default: "", Doc: "a name"},
		},
		Run: func(*passes.Context, *ir.Module) error { return nil },
	}
}

func TestPipelineRoundTrip(t *testing.T) {
	r := testRegistry(t, noop("nop"))
	for _, text := range []string{
		"verify",
		"verify,dce,verify",
		"dce{keep=loss},canonicalize-names",
		`nop{n=3,flag=true,ratio=1e-3,name="a, b}"}`,
		"nop{name=x.tmp_0@GRAD}",
		"repeat{count=2}(dce,verify)",
		"repeat(repeat{count=3}(nop{n=-1}),verify),verify",
	} {
		pl, err := r.Parse(text)
		if err != nil {
			t.Errorf("%s: %v", text, err)
			continue
		}
		if got := pl.String(); got != text {
			t.Errorf("Parse(%q).String() = %q", text, got)
		}
	}
	// Empty options and white space are not kept, and options keep the
	// order they were given.
	if pl, err := r.Parse("nop{}"); err != nil || pl.String() != "nop" {
		t.Errorf("nop{}: %v, %v", pl, err)
	}
	// White space is not kept, and options keep the order they were given.
	pl, err := r.Parse(" dce { keep = a } , nop{ name=z, n=2 } ")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := pl.String(), "dce{keep=a},nop{name=z,n=2}"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestPipelineErrors(t *testing.T) {
	r := testRegistry(t, noop("nop"))
	for _, tc := range []struct{ text, want string }{
		{"", `pipeline:1:1: expected pass name, found end of pipeline`},
		{"verify,", `pipeline:1:8: expected pass name, found end of pipeline`},
		{"verfy", `pipeline:1:1: unknown pass "verfy" (did you mean verify?)`},
		{"verify,frobnicate", `pipeline:1:8: unknown pass "frobnicate"`},
		{"dce{kep=x}", `pipeline:1:5: pass dce has no option "kep" (options: keep)`},
		{"verify{x=1}", `pipeline:1:8: pass verify has no option "x" (it has none)`},
		{"nop{n=x}", `pipeline:1:7: pass nop: option n wants an integer, not "x"`},
		{"nop{flag=yes}", `pipeline:1:10: pass nop: option flag wants true or false, not "yes"`},
		{"nop{ratio=}", `pipeline:1:11: pass nop: option ratio wants a finite number, not ""`},
		{"nop{ratio=nan}", `pipeline:1:11: pass nop: option ratio wants a finite number, not "nan"`},
		{"nop{ratio=-Inf}", `pipeline:1:11: pass nop: option ratio wants a finite number, not "-Inf"`},
		{"nop{ratio=1e400}", `pipeline:1:11: pass nop: option ratio wants a finite number, not "1e400"`},
		// Each built-in pass's option ranges and values.
		{"append-optimizer{lr=nan}", `pipeline:1:21: pass append-optimizer: option lr wants a finite number above 0, not "nan"`},
		{"append-optimizer{lr=-inf}", `pipeline:1:21: pass append-optimizer: option lr wants a finite number above 0, not "-inf"`},
		{"append-optimizer{lr=+Inf}", `pipeline:1:21: pass append-optimizer: option lr wants a finite number above 0, not "+Inf"`},
		{"append-optimizer{lr=0}", `pipeline:1:21: pass append-optimizer: option lr wants a finite number above 0, not "0"`},
		{"append-optimizer{lr=-0.01}", `pipeline:1:21: pass append-optimizer: option lr wants a finite number above 0, not "-0.01"`},
		{"append-optimizer{type=lars}", `pipeline:1:23: pass append-optimizer: option type wants one of sgd, momentum, adam, not "lars"`},
		{"repeat{count=-1}(verify)", `pipeline:1:14: pass repeat: option count wants an integer from 1 to 10000, not "-1"`},
		{"repeat{count=0}(verify)", `pipeline:1:14: pass repeat: option count wants an integer from 1 to 10000, not "0"`},
		{"repeat{count=10001}(verify)", `pipeline:1:14: pass repeat: option count wants an integer from 1 to 10000, not "10001"`},
		{"partition{rank=-5}", `pipeline:1:16: pass partition: option rank wants an integer from 0 to 2147483647, not "-5"`},
		{"partition-vars{rank=2147483648}", `pipeline:1:21: pass partition-vars: option rank wants an integer from 0 to 2147483647, not "2147483648"`},
		{"annotate-data-parallel{shape=1000000000}", `pipeline:1:30: pass annotate-data-parallel: option shape wants an integer from 0 to 1048576, not "1000000000"`},
		{"annotate-data-parallel{shape=-4}", `pipeline:1:30: pass annotate-data-parallel: option shape wants an integer from 0 to 1048576, not "-4"`},
		{"annotate-data-parallel{shape=four}", `pipeline:1:30: pass annotate-data-parallel: option shape wants an integer from 0 to 1048576, not "four"`},
		{"collective-dialect{style=xla}", `pipeline:1:26: pass collective-dialect: option style wants one of g1, pir, not "xla"`},
		{"nop{n=1,n=2}", `pipeline:1:9: option n given twice`},
		{"nop{n 1}", `pipeline:1:7: expected "=" after option n`},
		{"nop{n=1", `pipeline:1:4: unbalanced "{"`},
		{"nop{n=1 flag=true}", `pipeline:1:9: expected "," or "}" in options of nop, found 'f'`},
		{"nop}", `pipeline:1:4: unbalanced "}"`},
		{"repeat(dce", `pipeline:1:7: unbalanced "("`},
		{"verify)", `pipeline:1:7: unbalanced ")"`},
		{"repeat", `pipeline:1:7: pass repeat needs a sub-pipeline: repeat(…)`},
		{"dce(verify)", `pipeline:1:4: pass dce takes no sub-pipeline`},
		{`nop{name="abc}`, `pipeline:1:10: unterminated string`},
		{"verify;dce", `pipeline:1:7: unexpected ';'`},
		{"canonicalize-names,dce", `pipeline:1:1: dce must run before canonicalize-names: canonical names number the vars that survive; renaming first would leave gaps`},
		{"repeat(canonicalize-names,verify,dce)", `pipeline:1:8: dce must run before canonicalize-names: canonical names number the vars that survive; renaming first would leave gaps`},
	} {
		_, err := r.Parse(tc.text)
		if err == nil {
			t.Errorf("%q: no error, want %s", tc.text, tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("%q:\n got  %s\n want %s", tc.text, err, tc.want)
		}
	}
	// Order rules see through nesting: the steps count in written order.
	_, err := r.Parse("repeat(canonicalize-names),repeat(dce)")
	if err == nil || err.Error() != `pipeline:1:8: dce must run before canonicalize-names: canonical names number the vars that survive; renaming first would leave gaps` {
		t.Errorf("order across sub-pipelines: err = %v", err)
	}
	if _, err := r.Parse("dce,repeat(verify),canonicalize-names"); err != nil {
		t.Errorf("a pipeline that keeps the order: %v", err)
	}
	// Nesting is limited, at the "(" that passes the limit; 1M levels fail
	// as fast (the parser recurses per level).
	nest := func(n int) string { return strings.Repeat("repeat(", n) + "verify" + strings.Repeat(")", n) }
	if _, err := r.Parse(nest(passes.MaxPipelineDepth)); err != nil {
		t.Errorf("nested %d deep: %v", passes.MaxPipelineDepth, err)
	}
	want := fmt.Sprintf("pipeline:1:%d: sub-pipelines nest more than %d deep", 7*passes.MaxPipelineDepth+7, passes.MaxPipelineDepth)
	for _, n := range []int{passes.MaxPipelineDepth + 1, 1 << 20} {
		if _, err := r.Parse(nest(n)); err == nil || err.Error() != want {
			t.Errorf("nested %d deep: err = %v, want %s", n, err, want)
		}
	}
}

// TestOptionConstraint: what a listing and a message say an option takes.
func TestOptionConstraint(t *testing.T) {
	for _, tc := range []struct {
		o    passes.Option
		want string
	}{
		{passes.Option{Kind: passes.OptInt}, "an integer"},
		{passes.Option{Kind: passes.OptBool}, "true or false"},
		{passes.Option{Kind: passes.OptFloat}, "a finite number"},
		{passes.Option{Kind: passes.OptString}, "a string"},
		{passes.Option{Kind: passes.OptString, Values: []string{"a", "b"}}, "one of a, b"},
		{passes.Option{Kind: passes.OptInt, Range: &passes.Range{Min: 0, Max: 1 << 20}}, "an integer from 0 to 1048576"},
		{passes.Option{Kind: passes.OptInt, Range: &passes.Range{Min: 1, Max: math.MaxInt64}}, "an integer of at least 1"},
		{passes.Option{Kind: passes.OptFloat, Range: &passes.Range{Min: 0, Max: math.MaxFloat64, MinOpen: true}}, "a finite number above 0"},
		{passes.Option{Kind: passes.OptFloat, Range: &passes.Range{Min: 0, Max: 1, MinOpen: true}}, "a finite number above 0 and at most 1"},
		{passes.Option{Kind: passes.OptFloat, Range: &passes.Range{Min: -0.5, Max: 0.5}}, "a finite number from -0.5 to 0.5"},
	} {
		if got := tc.o.Constraint(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.o, got, tc.want)
		}
	}
	r := passes.Range{Min: 0, Max: 1, MinOpen: true}
	for v, want := range map[float64]bool{0: false, 1e-300: true, 1: true, 1.5: false, math.NaN(): false, math.Inf(1): false} {
		if r.Contains(v) != want {
			t.Errorf("(0, 1] contains %v: %v", v, !want)
		}
	}
}

func TestRegistryValidation(t *testing.T) {
	run := func(*passes.Context, *ir.Module) error { return nil }
	for _, tc := range []struct {
		name   string
		passes []*passes.Pass
		order  []passes.OrderRule
		want   string
	}{
		{"not kebab", []*passes.Pass{{Name: "Bad_Name", Doc: "x", Run: run}}, nil, `pass name "Bad_Name" is not kebab-case`},
		{"no doc", []*passes.Pass{{Name: "a", Run: run}}, nil, `pass a has no doc`},
		{"no run", []*passes.Pass{{Name: "a", Doc: "x"}}, nil, `pass a has no Run`},
		{"twice", []*passes.Pass{{Name: "a", Doc: "x", Run: run}, {Name: "a", Doc: "y", Run: run}}, nil, `pass a registered twice`},
		{"bad default", []*passes.Pass{{Name: "a", Doc: "x", Run: run, Options: []passes.Option{{Name: "n", Kind: passes.OptInt, Default: "x", Doc: "d"}}}}, nil,
			`pass a: default of option n wants an integer, not "x"`},
		{"default out of range", []*passes.Pass{{Name: "a", Doc: "x", Run: run, Options: []passes.Option{{Name: "n", Kind: passes.OptInt, Default: "0", Doc: "d",
			Range: &passes.Range{Min: 1, Max: 5}}}}}, nil,
			`pass a: default of option n wants an integer from 1 to 5, not "0"`},
		{"default not a value", []*passes.Pass{{Name: "a", Doc: "x", Run: run, Options: []passes.Option{{Name: "s", Kind: passes.OptString, Default: "", Doc: "d",
			Values: []string{"x", "y"}}}}}, nil,
			`pass a: default of option s wants one of x, y, not ""`},
		{"empty range", []*passes.Pass{{Name: "a", Doc: "x", Run: run, Options: []passes.Option{{Name: "n", Kind: passes.OptInt, Default: "0", Doc: "d",
			Range: &passes.Range{Min: 1, Max: 0}}}}}, nil,
			`pass a: option n has a range that is not one of its kind's`},
		{"range on a bool", []*passes.Pass{{Name: "a", Doc: "x", Run: run, Options: []passes.Option{{Name: "b", Kind: passes.OptBool, Default: "true", Doc: "d",
			Range: &passes.Range{Min: 0, Max: 1}}}}}, nil,
			`pass a: option b has a range that is not one of its kind's`},
		{"values on an int", []*passes.Pass{{Name: "a", Doc: "x", Run: run, Options: []passes.Option{{Name: "n", Kind: passes.OptInt, Default: "1", Doc: "d",
			Values: []string{"1"}}}}}, nil,
			`pass a: option n has values but is not a string option`},
		{"option doc", []*passes.Pass{{Name: "a", Doc: "x", Run: run, Options: []passes.Option{{Name: "n", Kind: passes.OptInt, Default: "1"}}}}, nil,
			`pass a: option n has no doc`},
		{"rule unknown", []*passes.Pass{{Name: "a", Doc: "x", Run: run}}, []passes.OrderRule{{"a", "b", "why"}}, `order rule a before b: no pass b`},
		{"rule why", []*passes.Pass{{Name: "a", Doc: "x", Run: run}, {Name: "b", Doc: "x", Run: run}}, []passes.OrderRule{{"a", "b", ""}}, `order rule a before b: no reason given`},
	} {
		_, err := passes.NewRegistry(tc.passes, tc.order)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: err = %v, want %s", tc.name, err, tc.want)
		}
	}
}
