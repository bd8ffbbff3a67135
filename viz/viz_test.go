package viz_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/viz"
)

// update rewrites the golden files: DISTPASS_UPDATE=1 go test ./viz.
var update = os.Getenv("DISTPASS_UPDATE") != ""

type testCase struct {
	name   string
	module func(t *testing.T) *ir.Module
	opts   viz.Options
}

func parseFile(path string) func(t *testing.T) *ir.Module {
	return func(t *testing.T) *ir.Module {
		t.Helper()
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ir.Parse(filepath.Base(path), src)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
}

func synthetic(n int) func(t *testing.T) *ir.Module {
	return func(*testing.T) *ir.Module { return irgen.Synthetic(n) }
}

func random(seed uint64) func(t *testing.T) *ir.Module {
	return func(*testing.T) *ir.Module { return irgen.Random(seed) }
}

var (
	mlp         = parseFile("../examples/mlp_dp_mp.dpir")
	whileLoop   = parseFile("../examples/while_loop.dpir")
	subblocks   = parseFile("testdata/subblocks.dpir")
	broken      = parseFile("testdata/broken.dpir")
	partitioned = parseFile("testdata/partitioned.dpir")
	reshard     = parseFile("testdata/reshard.dpir")
)

// cases are the golden cases: testdata/<name>.<program>.dot for each
// program of the module.
var cases = []testCase{
	{"mlp_dp_mp", mlp, viz.Options{}},
	{"mlp_dp_mp.hidevars", mlp, viz.Options{HideVars: true}},
	{"while_loop", whileLoop, viz.Options{}},
	{"while_loop.hidevars", whileLoop, viz.Options{HideVars: true}},
	{"while_loop.block1", whileLoop, viz.Options{Blocks: []int{1}}},
	{"subblocks", subblocks, viz.Options{}},
	{"subblocks.hidevars", subblocks, viz.Options{HideVars: true}},
	{"subblocks.blocks", subblocks, viz.Options{Blocks: []int{3, 2, 9, 2}}},
	{"broken", broken, viz.Options{}},
	{"broken.hidevars", broken, viz.Options{HideVars: true}},
	{"partitioned", partitioned, viz.Options{}},
	{"reshard", reshard, viz.Options{}},
	{"reshard.hidevars", reshard, viz.Options{HideVars: true}},
	{"synthetic.max40", synthetic(40), viz.Options{MaxNodes: 40}},
	{"synthetic.hidevars.max12", synthetic(40), viz.Options{HideVars: true, MaxNodes: 12}},
	{"random3", random(3), viz.Options{}},
	{"random6", random(6), viz.Options{}},
	{"random17", random(17), viz.Options{}},
	{"random17.hidevars", random(17), viz.Options{HideVars: true}},
}

// TestGolden draws every case, compares it with its golden file, and
// renders it with Graphviz.
func TestGolden(t *testing.T) {
	want := map[string]bool{}
	for _, c := range cases {
		m := c.module(t)
		for _, g := range viz.ModuleDOT(m, c.opts) {
			file := c.name + "." + g.Program + ".dot"
			want[file] = true
			t.Run(file, func(t *testing.T) {
				t.Parallel()
				checkGolden(t, filepath.Join("testdata", file), g.DOT)
				t.Run("render", func(t *testing.T) { render(t, g.DOT) })
			})
		}
	}
	files, err := filepath.Glob("testdata/*.dot")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !want[filepath.Base(f)] {
			t.Errorf("%s: stale golden file: no case draws it", f)
		}
	}
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (DISTPASS_UPDATE=1 go test ./viz writes it)", err)
	}
	if d := diff.Diff("want", want, "got", got); d != nil {
		t.Errorf("%s differs (DISTPASS_UPDATE=1 go test ./viz to accept):\n%s", path, d)
	}
}

var (
	dotOnce sync.Once
	dotPath string
)

// render runs dot -Tsvg on src and fails unless dot exits 0 and writes
// nothing to stderr: a warning is a failure. Without dot it skips, unless
// DISTPASS_REQUIRE_DOT is set (CI sets it, having installed Graphviz).
func render(t *testing.T, src []byte) {
	t.Helper()
	dotOnce.Do(func() { dotPath, _ = exec.LookPath("dot") })
	if dotPath == "" {
		if os.Getenv("DISTPASS_REQUIRE_DOT") != "" {
			t.Fatal("Graphviz dot not found in $PATH, and DISTPASS_REQUIRE_DOT is set")
		}
		t.Skip("Graphviz dot not found in $PATH; not rendering")
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(dotPath, "-Tsvg")
	cmd.Stdin = bytes.NewReader(src)
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("dot -Tsvg: %v\nstderr:\n%s\ninput:\n%s", err, stderr.Bytes(), src)
	}
	if !bytes.Contains(stdout.Bytes(), []byte("</svg>")) {
		t.Fatalf("dot -Tsvg wrote no SVG:\n%s", stdout.Bytes())
	}
}

// TestDeterministic: drawing twice, drawing a clone, and drawing the
// module re-parsed from its text all give the same bytes.
func TestDeterministic(t *testing.T) {
	check := func(t *testing.T, m *ir.Module, opts viz.Options) {
		t.Helper()
		first := viz.ModuleDOT(m, opts)
		again := viz.ModuleDOT(m, opts)
		clone := viz.ModuleDOT(m.Clone(), opts)
		m2, err := ir.Parse("reparsed.dpir", ir.Print(m))
		if err != nil {
			t.Fatal(err)
		}
		reparsed := viz.ModuleDOT(m2, opts)
		for i, g := range first {
			for _, other := range []struct {
				what string
				gs   []viz.Graph
			}{{"second drawing", again}, {"clone", clone}, {"re-parsed module", reparsed}} {
				o := other.gs[i]
				if o.Program != g.Program || !bytes.Equal(o.DOT, g.DOT) {
					t.Fatalf("%s of program %s draws differently:\n%s", other.what, g.Program,
						diff.Diff("first", g.DOT, other.what, o.DOT))
				}
			}
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { check(t, c.module(t), c.opts) })
	}
	t.Run("synthetic1000", func(t *testing.T) {
		m := irgen.Synthetic(1000)
		check(t, m, viz.Options{})
		check(t, m, viz.Options{HideVars: true, MaxNodes: 300})
	})
	t.Run("random", func(t *testing.T) {
		for seed := range uint64(200) {
			m := irgen.Random(seed)
			check(t, m, viz.Options{})
			check(t, m, viz.Options{HideVars: true})
			check(t, m, viz.Options{Blocks: []int{1}, MaxNodes: 10})
		}
	})
}

// TestRenderRandom renders random modules, with their odd names, block
// refs that cycle or dangle, and parent chains in every shape.
func TestRenderRandom(t *testing.T) {
	n := uint64(15)
	if testing.Short() {
		n = 5
	}
	for seed := range n {
		m := irgen.Random(seed)
		for _, opts := range []viz.Options{{}, {HideVars: true}, {Blocks: []int{1, 2}}} {
			for _, g := range viz.ModuleDOT(m, opts) {
				name := fmt.Sprintf("seed=%d/hidevars=%v/blocks=%v/%s", seed, opts.HideVars, opts.Blocks, g.Program)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					if !utf8.Valid(g.DOT) {
						t.Fatalf("DOT is not UTF-8:\n%q", g.DOT)
					}
					render(t, g.DOT)
				})
			}
		}
	}
}

var (
	nodeLine  = regexp.MustCompile(`(?m)^\t+n\d+\[(.*)\];$`)
	labelAttr = regexp.MustCompile(`label="((?:[^"\\]|\\.)*)"`)
)

// drawnNodes returns the attribute lists of the nodes in src, without the
// note node, and the note's label ("" when there is none).
func drawnNodes(src []byte) (nodes []string, note string) {
	for _, m := range nodeLine.FindAllSubmatch(src, -1) {
		attrs := string(m[1])
		if strings.Contains(attrs, `shape="note"`) {
			note = labelAttr.FindStringSubmatch(attrs)[1]
			continue
		}
		nodes = append(nodes, attrs)
	}
	return nodes, note
}

func TestMaxNodes(t *testing.T) {
	m := irgen.Synthetic(1000)
	p := m.Main
	nOps := p.NumOps()
	nVars := p.Global().NumVars()

	t.Run("vars", func(t *testing.T) {
		const max = 500
		nodes, note := drawnNodes(viz.DOT(p, viz.Options{MaxNodes: max}))
		if len(nodes) > max {
			t.Errorf("%d nodes drawn, want at most %d", len(nodes), max)
		}
		// An op and its new vars are cut together; no op has more than 4.
		if len(nodes) < max-4 {
			t.Errorf("%d nodes drawn, want close to %d", len(nodes), max)
		}
		re := regexp.MustCompile(`^showing (\d+) of (\d+) ops and (\d+) of (\d+) vars \(MaxNodes 500\)\\n(\d+) ops and (\d+) vars omitted$`)
		sm := re.FindStringSubmatch(note)
		if sm == nil {
			t.Fatalf("note %q does not match %s", note, re)
		}
		n := make([]int, len(sm))
		for i := 1; i < len(sm); i++ {
			n[i], _ = strconv.Atoi(sm[i])
		}
		if n[2] != nOps || n[4] != nVars || n[1]+n[5] != nOps || n[3]+n[6] != nVars || n[1]+n[3] != len(nodes) {
			t.Errorf("note %q: counts do not add up (%d ops, %d vars, %d nodes drawn)", note, nOps, nVars, len(nodes))
		}
		ops := 0
		for _, attrs := range nodes {
			if strings.Contains(attrs, `label="op `) {
				ops++
			}
		}
		if ops != n[1] {
			t.Errorf("%d op nodes drawn, note says %d", ops, n[1])
		}
	})

	t.Run("hidevars", func(t *testing.T) {
		nodes, note := drawnNodes(viz.DOT(p, viz.Options{HideVars: true, MaxNodes: 100}))
		if len(nodes) != 100 {
			t.Errorf("%d nodes drawn, want 100", len(nodes))
		}
		if want := fmt.Sprintf(`showing 100 of %d ops (MaxNodes 100)\n%d ops omitted`, nOps, nOps-100); note != want {
			t.Errorf("note = %q, want %q", note, want)
		}
	})

	t.Run("fits", func(t *testing.T) {
		all := viz.DOT(p, viz.Options{})
		nodes, _ := drawnNodes(all)
		for _, max := range []int{len(nodes), len(nodes) + 1, 0, -1} {
			got := viz.DOT(p, viz.Options{MaxNodes: max})
			if !bytes.Equal(got, all) {
				t.Errorf("MaxNodes %d (%d nodes): drawing differs from the uncapped one", max, len(nodes))
			}
		}
	})

	t.Run("tiny", func(t *testing.T) {
		// The first op and its vars do not fit: nothing but the note.
		nodes, note := drawnNodes(viz.DOT(p, viz.Options{MaxNodes: 1}))
		if len(nodes) != 0 || !strings.HasPrefix(note, fmt.Sprintf("showing 0 of %d ops", nOps)) {
			t.Errorf("MaxNodes 1: %d nodes, note %q", len(nodes), note)
		}
	})
}

// TestBlocks checks what a drawing of some blocks leaves out and how it
// shows vars declared in blocks it does not draw.
func TestBlocks(t *testing.T) {
	p := whileLoop(t).Main
	got := string(viz.DOT(p, viz.Options{Blocks: []int{1}}))
	for _, s := range []string{`label="block 1 (parent 0)"`, `label="x\nf32[4, 8]\nin block 0",shape="ellipse",style="dotted"`, `label="op 5 scale"`} {
		if !strings.Contains(got, s) {
			t.Errorf("Blocks [1]: no %s in\n%s", s, got)
		}
	}
	for _, s := range []string{`"block 0"`, `op 4 while`, `sub_block`} {
		if strings.Contains(got, s) {
			t.Errorf("Blocks [1]: %s drawn:\n%s", s, got)
		}
	}
	got = string(viz.DOT(p, viz.Options{Blocks: []int{7, -1}}))
	if _, note := drawnNodes([]byte(got)); note != `no block 7 in program main (2 blocks)\nno block -1 in program main (2 blocks)` {
		t.Errorf("Blocks [7, -1]: note %q", note)
	}
	if strings.Contains(got, "subgraph") {
		t.Errorf("Blocks [7, -1]: a cluster is drawn:\n%s", got)
	}
}

// oddNames are names the text format must quote; irgen.Random uses the
// same kinds.
var oddNames = []string{"", "with space", "quote\"d", "back\\slash", "tab\there", "ünïcode", "9lives", "a-b",
	"{x}", "#hash", "new\nline", "\xff\xfe", "<b>&amp;</b>", `\N\G\l`, "\x00\x7f"}

// TestOddNames uses every odd name as a var, op type, slot, mesh and attr
// name: the drawing must be UTF-8, show each name as the text format
// quotes it, and render.
func TestOddNames(t *testing.T) {
	m := ir.NewModule("odd")
	b := ir.NewBuilder(m)
	for i, name := range oddNames {
		b.Mesh(name, []int{2}, []string{"d"}, []int{0, 1})
		b.Var(name, ir.Tensor(ir.F32, 2)).WithDist(name, 0).WithPartial(0, ir.ReduceMax)
		out := "out" + strconv.Itoa(i)
		b.Var(out, ir.Tensor(ir.F32, 2)).WithDist(name, -1)
		op := b.Op(name, []ir.Slot{ir.S(name, name), ir.S("Y", name)}, ir.Slots("Out", out))
		b.Annotate(op, name, i)
		sub := b.SubBlock()
		op.Attrs.Set(name, ir.BlockRef(sub.Block().Index))
		sub.Op("scale", ir.Slots("X", name), ir.Slots("Out", out))
	}
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []viz.Options{{}, {HideVars: true}} {
		got := viz.DOT(m.Main, opts)
		if !utf8.Valid(got) {
			t.Fatalf("DOT is not UTF-8:\n%q", got)
		}
		if i := bytes.IndexFunc(got, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f }); i >= 0 {
			t.Fatalf("control character at byte %d:\n%q", i, got)
		}
		if !opts.HideVars {
			// "back\slash" is quoted as "back\\slash", and DOT escapes
			// both the quotes and the backslashes once more.
			for _, s := range []string{`label="\"back\\\\slash\"\nf32[2]\n@\"back\\\\slash\"[0] partial [0:max]"`,
				`label="\"\\xff\\xfe\"`, `"\"<b>&amp;amp;</b>\""`, `"\"\\\\N\\\\G\\\\l\""`, `"\"new\\nline\""`} {
				if !bytes.Contains(got, []byte(s)) {
					t.Errorf("no %s in\n%s", s, got)
				}
			}
		}
		t.Run(fmt.Sprintf("hidevars=%v/render", opts.HideVars), func(t *testing.T) { render(t, got) })
	}
}
