package viz_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/viz"
)

// explorerPipeline has passes that change nothing around the one that
// does: verify checks, canonicalize-names finds the names canonical.
const explorerPipeline = "verify,canonicalize-names,verify,partition{rank=0},verify"

// noDot is a lookup that finds no Graphviz.
func noDot(string) (string, error) { return "", exec.ErrNotFound }

// record runs text over m (changing m) with a Recorder and returns the
// trace and the run's error.
func record(t *testing.T, reg *passes.Registry, name, text string, m *ir.Module) (*viz.Trace, error) {
	t.Helper()
	pl, err := reg.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	rec := &viz.Recorder{Name: name}
	err = (&passes.Manager{Instruments: []passes.Instrument{rec}}).Run(context.Background(), pl, m)
	return rec.Trace(), err
}

func renderPage(t *testing.T, opts viz.ExplorerOptions, traces ...*viz.Trace) string {
	t.Helper()
	var buf bytes.Buffer
	if err := viz.WriteExplorer(&buf, traces, opts); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// expectedColumns runs the pipeline's steps one at a time on a clone of
// m and says, by comparing printed text (not hashes, as the recorder
// does), which steps changed the module: for each column, the text and
// the labels of the steps merged into it.
func expectedColumns(t *testing.T, text string, m *ir.Module) (texts []string, also [][]string) {
	t.Helper()
	pl := passes.DefaultRegistry().MustParse(text)
	snap := &snapshots{texts: []string{string(ir.Print(m))}, also: [][]string{nil}}
	if err := (&passes.Manager{Instruments: []passes.Instrument{snap}}).Run(context.Background(), pl, m.Clone()); err != nil {
		t.Fatal(err)
	}
	return snap.texts, snap.also
}

// snapshots prints the module after every execution, nested ones (the
// steps of partition) included, and keeps a text when it differs from the
// last kept one, else the execution's label beside that one.
type snapshots struct {
	passes.NopInstrument
	texts []string
	also  [][]string
}

func (s *snapshots) AfterPass(e *passes.Execution, m *ir.Module, err error) error {
	if after := string(ir.Print(m)); after != s.texts[len(s.texts)-1] {
		s.texts = append(s.texts, after)
		s.also = append(s.also, nil)
	} else {
		s.also[len(s.also)-1] = append(s.also[len(s.also)-1], e.Label())
	}
	return nil
}

// A column per pass that changed the module, plus the input; the others
// are listed on the column they left as it was.
func TestExplorerColumnsMergeUnchangedPasses(t *testing.T) {
	m := mlp(t)
	texts, also := expectedColumns(t, explorerPipeline, m)
	if len(texts) < 2 || len(texts) > 5 {
		t.Fatalf("the pipeline changes the module %d times; the test wants passes that change nothing and at least one that does", len(texts)-1)
	}
	tr, err := record(t, passes.DefaultRegistry(), "serial", explorerPipeline, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Versions) != len(texts) {
		t.Fatalf("%d versions, want %d (the changed passes + 1)", len(tr.Versions), len(texts))
	}
	for i, v := range tr.Versions {
		if got := string(ir.Print(v.Module)); got != texts[i] {
			t.Errorf("version %d (%s) is not the module as that pass left it", i, v.Label)
		}
		var labels []string
		for _, mg := range v.Also {
			labels = append(labels, mg.Label)
		}
		if !slices.Equal(labels, also[i]) {
			t.Errorf("version %d (%s) lists %q, want %q", i, v.Label, labels, also[i])
		}
	}
	if tr.Versions[0].Label != "input" || tr.Versions[1].Label != "partition-vars{rank=0} (#6)" {
		t.Errorf("labels %q, %q", tr.Versions[0].Label, tr.Versions[1].Label)
	}

	page := renderPage(t, viz.ExplorerOptions{LookPath: noDot}, tr)
	cols := columns(t, page)
	if len(cols) != len(texts) {
		t.Fatalf("%d columns on the page, want %d", len(cols), len(texts))
	}
	for i, c := range cols {
		if len(also[i]) == 0 {
			if strings.Contains(c, `class="also"`) {
				t.Errorf("column %d lists merged passes, and none was merged", i)
			}
			continue
		}
		if want := "also: " + strings.Join(also[i], ", "); !strings.Contains(c, want) {
			t.Errorf("column %d does not say %q", i, want)
		}
		if got := textOf(c); got != texts[i] {
			t.Errorf("column %d shows\n%s\nwant\n%s", i, got, texts[i])
		}
	}
}

// Nested executions are recorded under their own labels, naming the pass
// that ran them; the nested pass itself changes nothing more.
func TestRecorderNested(t *testing.T) {
	m, err := ir.ParseString("dead.dpir", `
program main {
  block 0 {
    var x : f32[4]
    var y : f32[4]
    var dead : f32[4]
    op 1 relu(X: x) -> (Out: y) role forward|loss
    op 2 relu(X: x) -> (Out: dead) role forward
  }
}`)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := record(t, passes.DefaultRegistry(), "nested", "repeat{count=2}(dce,verify)", m)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range tr.Versions {
		s := v.Label + " [" + v.Parent + "]"
		for _, mg := range v.Also {
			s += " " + mg.Label
		}
		got = append(got, s)
	}
	want := []string{
		"input []",
		"dce (#2) [repeat{count=2} (#1)] verify (#3) dce (#4) verify (#5) repeat{count=2} (#1)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("versions:\n got %q\nwant %q", got, want)
	}
	page := renderPage(t, viz.ExplorerOptions{LookPath: noDot}, tr)
	if !strings.Contains(page, `<p class="parent">in repeat{count=2} (#1)</p>`) {
		t.Errorf("the nested column does not name its parent")
	}
}

// testRegistry has passes that turn the module into a given text, that
// change nothing, and that fail.
func testRegistry(t *testing.T, targets map[string]string) *passes.Registry {
	t.Helper()
	var ps []*passes.Pass
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range targets {
			if !yield(k) {
				return
			}
		}
	}) {
		target, err := ir.ParseString(name+".dpir", targets[name])
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, &passes.Pass{Name: name, Doc: "turn the module into a fixed one", Run: func(_ *passes.Context, m *ir.Module) error {
			*m = *target.Clone()
			return nil
		}})
	}
	ps = append(ps,
		&passes.Pass{Name: "nop", Doc: "change nothing", Run: func(*passes.Context, *ir.Module) error { return nil }},
		&passes.Pass{Name: "fail", Doc: "fail", Run: func(*passes.Context, *ir.Module) error { return errors.New("no good") }},
		&passes.Pass{Name: "boom", Doc: "panic", Run: func(*passes.Context, *ir.Module) error { panic("kaboom") }},
		&passes.Pass{Name: "half", Doc: "rename x, then fail", Run: func(_ *passes.Context, m *ir.Module) error {
			m.Main.Blocks[0].Ops[0].Type = "half_done"
			return errors.New("stopped halfway")
		}},
	)
	reg, err := passes.NewRegistry(ps, nil)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

const smallA = `
program main {
  block 0 {
    var x : f32[4]
    var y : f32[4]
    var z : f32[4]
    op 1 relu(X: x) -> (Out: y) role forward
    op 2 scale(X: y) -> (Out: z) {scale = 2.0} role forward
  }
}`

// smallB drops op 1, changes op 2's attr and adds a var after z.
const smallB = `
program main {
  block 0 {
    var x : f32[4]
    var y : f32[4]
    var z : f32[4]
    var w : f32[4]
    op 2 scale(X: y) -> (Out: z) {scale = 3.0} role forward
  }
}`

// The highlighted lines of a column are exactly the lines the pass added
// or changed; the lines it removed are marked on the line after them.
func TestExplorerHighlightsChangedLines(t *testing.T) {
	m, err := ir.ParseString("a.dpir", smallA)
	if err != nil {
		t.Fatal(err)
	}
	reg := testRegistry(t, map[string]string{"to-b": smallB})
	tr, err := record(t, reg, "small", "nop,to-b,nop", m)
	if err != nil {
		t.Fatal(err)
	}
	cols := columns(t, renderPage(t, viz.ExplorerOptions{LookPath: noDot}, tr))
	if len(cols) != 2 {
		t.Fatalf("%d columns, want 2", len(cols))
	}
	if got := linesWith(cols[0], "add"); len(got) != 0 {
		t.Errorf("the input column highlights %q", got)
	}
	wantAdd := []string{
		"    var w : f32[4]",
		"    op 2 scale(X: y) -> (Out: z) {scale = 3.0} role forward",
	}
	if got := linesWith(cols[1], "add"); !slices.Equal(got, wantAdd) {
		t.Errorf("highlighted lines:\n got %q\nwant %q", got, wantAdd)
	}
	// op 1 and the old op 2 were removed after var z, where var w now is.
	if got := linesWith(cols[1], "del"); !slices.Equal(got, wantAdd[:1]) {
		t.Errorf("lines marked as following removed lines: %q, want %q", got, wantAdd[:1])
	}
	if !strings.Contains(cols[1], `title="2 lines removed above"`) || !strings.Contains(cols[1], "+2 −2 lines") {
		t.Errorf("the column does not count 2 lines added and 2 removed:\n%s", cols[1])
	}
	if !strings.Contains(cols[0], "also: nop (#1)") || !strings.Contains(cols[1], "also: nop (#3)") {
		t.Errorf("the nops are not listed")
	}
}

// A failed pass gets a column of its own, marked, with its error, even
// when it changed nothing; a panic shows its stack.
func TestExplorerFailedPass(t *testing.T) {
	for _, tc := range []struct {
		pipeline, label, err string
		changed, stack       bool
	}{
		{"nop,fail,nop", "fail (#2)", "no good", false, false},
		{"nop,boom", "boom (#2)", "panic: kaboom", false, true},
		{"half", "half (#1)", "stopped halfway", true, false},
	} {
		t.Run(tc.pipeline, func(t *testing.T) {
			m, err := ir.ParseString("a.dpir", smallA)
			if err != nil {
				t.Fatal(err)
			}
			tr, runErr := record(t, testRegistry(t, nil), "failing", tc.pipeline, m)
			if runErr == nil {
				t.Fatal("the run did not fail")
			}
			if tr.Err != runErr.Error() {
				t.Errorf("trace error %q, want %q", tr.Err, runErr)
			}
			last := tr.Versions[len(tr.Versions)-1]
			if len(tr.Versions) != 2 || !last.Failed || last.Label != tc.label || !strings.Contains(last.Err, tc.err) {
				t.Fatalf("versions %d, last %q failed=%t err=%q", len(tr.Versions), last.Label, last.Failed, last.Err)
			}
			if (last.Hash != tr.Versions[0].Hash) != tc.changed {
				t.Errorf("changed = %t, want %t", last.Hash != tr.Versions[0].Hash, tc.changed)
			}
			page := renderPage(t, viz.ExplorerOptions{LookPath: noDot}, tr)
			cols := columns(t, page)
			if strings.Contains(cols[0], "failed") || !strings.HasPrefix(cols[1], `<div class="col failed"`) {
				t.Errorf("the failed column is not (the only one) marked")
			}
			if !strings.Contains(cols[1], "failed: "+html.EscapeString(runErr.Error())) {
				t.Errorf("the failed column does not give the error %q", runErr)
			}
			if got := strings.Contains(cols[1], "<summary>stack</summary>"); got != tc.stack {
				t.Errorf("stack shown = %t, want %t", got, tc.stack)
			}
			if !strings.Contains(page, `<p class="error">The run failed: `) {
				t.Errorf("the tab does not say that the run failed")
			}
			if tc.changed && len(linesWith(cols[1], "add")) != 1 {
				t.Errorf("the half-done change is not highlighted: %q", linesWith(cols[1], "add"))
			}
		})
	}
}

// Recording and rendering the same run twice gives the same bytes, also
// from a clone and from a re-parse of the module's text.
func TestExplorerDeterministic(t *testing.T) {
	pages := func(opts viz.ExplorerOptions) []string {
		var out []string
		for i, m := range []*ir.Module{mlp(t), mlp(t).Clone(), reparse(t, mlp(t))} {
			var trs []*viz.Trace
			for _, r := range []string{"0", "3"} {
				tr, err := record(t, passes.DefaultRegistry(), "rank "+r, "verify,partition{rank="+r+"},dce,canonicalize-names", m.Clone())
				if err != nil {
					t.Fatal(i, err)
				}
				trs = append(trs, tr)
			}
			out = append(out, renderPage(t, opts, trs...))
		}
		return out
	}
	ps := pages(viz.ExplorerOptions{LookPath: noDot})
	for i := 1; i < len(ps); i++ {
		if ps[i] != ps[0] {
			t.Errorf("render %d differs from render 0", i)
		}
	}
	if strings.Contains(ps[0], "<svg") {
		t.Errorf("a page without Graphviz has drawings")
	}
	if _, err := exec.LookPath("dot"); err != nil {
		if os.Getenv("DISTPASS_REQUIRE_DOT") != "" {
			t.Fatal("Graphviz dot not found, and DISTPASS_REQUIRE_DOT is set")
		}
		t.Skip("Graphviz dot not found: the rest, which draws, is not run")
	}
	// With the same Graphviz, the drawings are the same too.
	ps = pages(viz.ExplorerOptions{MaxNodes: 30})
	if ps[1] != ps[0] || ps[2] != ps[0] {
		t.Errorf("renders with drawings differ")
	}
}

// Without Graphviz the page says so in place of each drawing, and once on
// top; with it, each column has its drawing, with ids unique in the page.
func TestExplorerGraphviz(t *testing.T) {
	tr, err := record(t, passes.DefaultRegistry(), "serial", explorerPipeline, mlp(t))
	if err != nil {
		t.Fatal(err)
	}
	page := renderPage(t, viz.ExplorerOptions{LookPath: noDot}, tr)
	cols := columns(t, page)
	if n := strings.Count(page, "Graphviz (dot) is not installed"); n != len(cols)+1 {
		t.Errorf("the no-Graphviz message appears %d times, want %d (once per column and on top)", n, len(cols)+1)
	}
	if strings.Contains(page, "<svg") {
		t.Errorf("drawings without Graphviz")
	}

	// A dot that fails or hangs is reported in place of the drawing.
	falsePath, err := exec.LookPath("false")
	if err == nil {
		page := renderPage(t, viz.ExplorerOptions{LookPath: func(string) (string, error) { return falsePath, nil }}, tr)
		if n := strings.Count(page, `<p class="nograph">dot failed: exit status 1</p>`); n != len(cols) {
			t.Errorf("a failing dot is reported %d times, want %d", n, len(cols))
		}
	}
	slow := filepath.Join(t.TempDir(), "dot")
	if err := os.WriteFile(slow, []byte("#!/bin/sh\nexec sleep 10\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/bin/sh"); err == nil {
		start := time.Now()
		page := renderPage(t, viz.ExplorerOptions{DotTimeout: 200 * time.Millisecond, LookPath: func(string) (string, error) { return slow, nil }}, tr)
		if n := strings.Count(page, "dot took longer than 200ms"); n != len(cols) {
			t.Errorf("a hanging dot is reported %d times, want %d", n, len(cols))
		}
		if d := time.Since(start); d > 8*time.Second {
			t.Errorf("a hanging dot held the page up for %v", d)
		}
	}

	if _, err := exec.LookPath("dot"); err != nil {
		if os.Getenv("DISTPASS_REQUIRE_DOT") != "" {
			t.Fatal("Graphviz dot not found, and DISTPASS_REQUIRE_DOT is set")
		}
		t.Skip("Graphviz dot not found")
	}
	page = renderPage(t, viz.ExplorerOptions{MaxNodes: 40}, tr)
	cols = columns(t, page)
	for i, c := range cols {
		if n := strings.Count(c, "<svg"); n != 1 {
			t.Errorf("column %d has %d drawings, want 1", i, n)
		}
	}
	if strings.Contains(page, "not installed") || strings.Contains(page, "<?xml") {
		t.Errorf("the page with Graphviz says it is missing, or keeps the SVG prolog")
	}
	ids := map[string]bool{}
	for _, m := range regexp.MustCompile(` id="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if ids[m[1]] {
			t.Errorf("id %q appears twice", m[1])
		}
		ids[m[1]] = true
	}
}

// A tab per run, in order, the first shown; the runs' columns are apart.
func TestExplorerTabs(t *testing.T) {
	var trs []*viz.Trace
	for _, name := range []string{"serial", "rank 0", "rank 1"} {
		text := "verify"
		if r, ok := strings.CutPrefix(name, "rank "); ok {
			text = "partition{rank=" + r + "}"
		}
		tr, err := record(t, passes.DefaultRegistry(), name, text, mlp(t))
		if err != nil {
			t.Fatal(err)
		}
		trs = append(trs, tr)
	}
	page := renderPage(t, viz.ExplorerOptions{LookPath: noDot}, trs...)
	tabs := regexp.MustCompile(`<button type="button" class="tab" role="tab" id="tab-(r\d+)" aria-controls="(r\d+)" aria-selected="(true|false)">([^<]*)</button>`).FindAllStringSubmatch(page, -1)
	var got []string
	for _, tb := range tabs {
		got = append(got, tb[1]+" "+tb[2]+" "+tb[3]+" "+tb[4])
	}
	want := []string{"r0 r0 true serial", "r1 r1 false rank 0", "r2 r2 false rank 1"}
	if !slices.Equal(got, want) {
		t.Errorf("tabs:\n got %q\nwant %q", got, want)
	}
	sections := regexp.MustCompile(`<section class="run" id="(r\d+)" role="tabpanel" aria-labelledby="tab-r\d+"( hidden)?>`).FindAllStringSubmatch(page, -1)
	if len(sections) != 3 || sections[0][2] != "" || sections[1][2] == "" || sections[2][2] == "" {
		t.Errorf("sections %q: want r0 shown, r1 and r2 hidden", sections)
	}
	// serial: verify changes nothing, one column; each rank: the input and
	// the three steps of partition that change it (partition-vars and two
	// lowerings: the model has no optimizer).
	for i, want := range []int{1, 4, 4} {
		sec := page[strings.Index(page, fmt.Sprintf(`<section class="run" id="r%d"`, i)):]
		sec = sec[:strings.Index(sec, "</section>")]
		if n := len(colStart.FindAllString(sec, -1)); n != want {
			t.Errorf("run %d has %d columns, want %d", i, n, want)
		}
		if !strings.Contains(sec, fmt.Sprintf(`id="r%d-c0"`, i)) {
			t.Errorf("run %d's first column is not r%d-c0", i, i)
		}
	}
	if !strings.Contains(page, "program main rank 1 {") {
		t.Errorf("rank 1's program is not on the page")
	}
}

// Var names and op ids are spans to click; the other names are not.
func TestExplorerSpans(t *testing.T) {
	tr, err := record(t, passes.DefaultRegistry(), "serial", "verify", mlp(t))
	if err != nil {
		t.Fatal(err)
	}
	page := renderPage(t, viz.ExplorerOptions{LookPath: noDot}, tr)
	text := string(ir.Print(tr.Versions[0].Module))
	// w1 as a whole name: not part of w1@GRAD.
	want := 0
	for _, name := range regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_.@]*`).FindAllString(text, -1) {
		if name == "w1" {
			want++
		}
	}
	if got := strings.Count(page, `<span class="var" data-var="w1">w1</span>`); got != want || want < 5 {
		t.Errorf("%d w1 spans, want %d", got, want)
	}
	if got := strings.Count(page, `<span class="var" data-var="w1@GRAD">w1@GRAD</span>`); got < 3 {
		t.Errorf("%d w1@GRAD spans", got)
	}
	// op 1 of main, and op 9 backs onto it (fwd 1); startup's op 1 is another.
	if got := strings.Count(page, `<span class="op" data-op="main:1">1</span>`); got != 2 {
		t.Errorf("%d spans of main's op 1, want 2", got)
	}
	if got := strings.Count(page, `<span class="op" data-op="startup:1">1</span>`); got != 1 {
		t.Errorf("%d spans of startup's op 1, want 1", got)
	}
	for _, not := range []string{"X", "Out", "world", "dp", "f32", "forward", "matmul_v2"} {
		if strings.Contains(page, `data-var="`+not+`"`) {
			t.Errorf("%s is marked as a var", not)
		}
	}
}

func reparse(t *testing.T, m *ir.Module) *ir.Module {
	t.Helper()
	r, err := ir.Parse("reparse.dpir", ir.Print(m))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var colStart = regexp.MustCompile(`<div class="col( failed)?" id="r\d+-c\d+">`)

// columns splits a page into its columns' HTML, in order.
func columns(t *testing.T, page string) []string {
	t.Helper()
	idx := colStart.FindAllStringIndex(page, -1)
	var cols []string
	for i, ix := range idx {
		end := len(page)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		cols = append(cols, page[ix[0]:end])
	}
	return cols
}

var (
	lineRE = regexp.MustCompile(`<div class="l([^"]*)"(?: title="[^"]*")?>(.*)</div>`)
	tagRE  = regexp.MustCompile(`<[^>]*>`)
)

// textOf is the module text a column shows.
func textOf(col string) string {
	var sb strings.Builder
	for _, m := range lineRE.FindAllStringSubmatch(col, -1) {
		if slices.Contains(strings.Fields(m[1]), "end") {
			continue // the mark of lines removed at the end
		}
		sb.WriteString(html.UnescapeString(tagRE.ReplaceAllString(m[2], "")))
		sb.WriteByte('\n')
	}
	return sb.String()
}

// linesWith returns the text of a column's lines that have class c.
func linesWith(col, c string) []string {
	var out []string
	for _, m := range lineRE.FindAllStringSubmatch(col, -1) {
		if slices.Contains(strings.Fields(m[1]), c) {
			out = append(out, html.UnescapeString(tagRE.ReplaceAllString(m[2], "")))
		}
	}
	return out
}

// Every string of a trace reaches the page escaped: a name, pipeline,
// label, error, stack or module text holding markup adds none.
func TestExplorerEscapes(t *testing.T) {
	const bad = `<b x='1'>&"</b><script>alert(1)</script>`
	m, err := ir.ParseString("a.dpir", smallA)
	if err != nil {
		t.Fatal(err)
	}
	m.Main.Global().Ops[0].Attrs.Set("note", ir.String(bad))
	v := &viz.Version{Label: bad, Parent: bad, Module: m, Failed: true, Err: bad, Stack: []byte(bad),
		Also: []viz.Merged{{Label: bad, Skipped: true}}}
	tr := &viz.Trace{Name: bad, Pipeline: bad, Err: bad, Versions: []*viz.Version{v}}
	page := renderPage(t, viz.ExplorerOptions{Title: bad, LookPath: noDot}, tr)
	if n := strings.Count(page, "<script"); n != 1 {
		t.Errorf("%d script elements, want the page's own", n)
	}
	if strings.Contains(page, "<b x") || strings.Contains(page, "x='1'") || strings.Contains(page, "</b>") {
		t.Errorf("markup from the trace reached the page:\n%s", page)
	}
	// Title, h1, tab, pipeline, run error, label, parent, also, error,
	// stack: each once, escaped.
	if n := strings.Count(page, "&lt;b x=&#39;1&#39;&gt;&amp;&#34;&lt;/b&gt;"); n != 10 {
		t.Errorf("the string appears escaped %d times, want 10", n)
	}
}

// completeLoop is a while loop on a 2-rank mesh with only x annotated:
// the complete pass completes the body's x_next too, and the body's
// block (1) keys its var, not block 0.
const completeLoop = `
mesh world shape [2] dims [dp] ranks [0, 1]
program main {
  block 0 {
    var x : f32[4, 8] @world[0, -1] {is_data, stop_gradient}
    var y : f32[4, 8]
    op 1 relu(X: x) -> (Out: y) role forward
    op 2 while(X: [y], Condition: c) -> (Out: [y], StepScopes: scopes) {is_test = false, sub_block = ^1} role forward
    var c : bool[1]
    var scopes : step_scopes
  }
  block 1 parent 0 {
    var x_next : f32[4, 8]
    op 3 scale(X: y) -> (Out: x_next) {bias = 0.0, bias_after_scale = true, scale = 0.5} role forward
  }
}`

var (
	origLineRE = regexp.MustCompile(`<div class="l([^"]*) orig" title="([^"]*)">(.*)</div>\n<pre class="origin" hidden>([^<]*)</pre>\n`)
	removedRE  = regexp.MustCompile(`^\d+ lines? removed above\n\n`)
)

// origin returns, for a match of origLineRE, the line's text and its
// origin, from its title (without the note of lines removed above it,
// which a del line's title starts with) and from its panel.
func origin(t *testing.T, mm []string) (line, title, panel string) {
	t.Helper()
	line = html.UnescapeString(tagRE.ReplaceAllString(mm[3], ""))
	title, panel = html.UnescapeString(mm[2]), html.UnescapeString(mm[4])
	if del := slices.Contains(strings.Fields(mm[1]), "del"); del != removedRE.MatchString(title) {
		t.Errorf("line %q (class%s): title %q", line, mm[1], title)
	}
	return line, removedRE.ReplaceAllString(title, ""), panel
}

// In the complete pass's column, each var declaration of the main
// program carries where its mapping came from, as its title and in a
// hidden panel below it; no other column does, and the panel is no line
// of the module's text.
func TestExplorerCompleteOrigins(t *testing.T) {
	src, err := os.ReadFile("../examples/gpt_bare.dpir")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ir.Parse("gpt_bare.dpir", src)
	if err != nil {
		t.Fatal(err)
	}
	const pipeline = "complete,partition{rank=0}"
	texts, _ := expectedColumns(t, pipeline, m)
	tr, err := record(t, passes.DefaultRegistry(), "serial", pipeline, m)
	if err != nil {
		t.Fatal(err)
	}
	page := renderPage(t, viz.ExplorerOptions{LookPath: noDot}, tr)
	cols := columns(t, page)
	if len(cols) != len(texts) || len(cols) < 3 {
		t.Fatalf("%d columns, %d expected", len(cols), len(texts))
	}
	for i, col := range cols {
		if got := textOf(col); got != texts[i] {
			t.Errorf("column %d's text is not the module's:\n%s", i, got)
		}
		if isComplete := strings.Contains(col, "<h2 title=\"fold or unfold\">complete (#1)</h2>"); isComplete != (i == 1) {
			t.Fatalf("column %d is complete's: %v", i, isComplete)
		}
		if i != 1 && (strings.Contains(col, " orig\"") || strings.Contains(col, `class="origin"`)) {
			t.Errorf("column %d (not complete's) shows origins", i)
		}
	}
	col := cols[1]
	origins := map[string]string{}
	for _, mm := range origLineRE.FindAllStringSubmatch(col, -1) {
		line, title, panel := origin(t, mm)
		if title != panel {
			t.Errorf("line %q: title %q, panel %q", line, title, panel)
		}
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "var" && f[0] != "param" && f[0] != "persist" {
			t.Errorf("an origin on a line that declares no var: %q", line)
			continue
		}
		if _, dup := origins[f[1]]; dup {
			t.Errorf("%s has two origins (the startup program's declaration has none)", f[1])
		}
		origins[f[1]] = title
	}
	// Every main var but the two scalars (loss and its grad: no dims).
	if n, lines := len(origins), strings.Count(col, `<pre class="origin"`); n != 252 || lines != n {
		t.Errorf("%d vars with an origin, %d panels; want 252", n, lines)
	}
	want := map[string]string{
		"l0_fc1_b": "l0_fc1_b dim 0: split along mesh dim 1 (mp), from var l0_fc1_w\n" +
			"  op 44 matmul_v2: l0_fc1_w dim 1 -> l0_fc1_mm dim 2\n" +
			"  op 45 elementwise_add: l0_fc1_mm dim 2 -> l0_fc1_b dim 0",
		"l0_fc1_w@GRAD": "l0_fc1_w@GRAD dim 0: replicated\n" +
			"l0_fc1_w@GRAD dim 1: split along mesh dim 1 (mp), from var l0_fc1_w\n" +
			"  op 148 matmul_v2_grad: l0_fc1_w dim 1 -> l0_fc1_w@GRAD dim 1",
		"wte": "wte dim 0: replicated\nwte dim 1: replicated",
	}
	for name, w := range want {
		if got := origins[name]; got != w {
			t.Errorf("%s's origin:\n%s\nwant:\n%s", name, got, w)
		}
	}

	// A sub-block's var: keyed by its own block.
	m, err = ir.ParseString("loop.dpir", completeLoop)
	if err != nil {
		t.Fatal(err)
	}
	tr, err = record(t, passes.DefaultRegistry(), "serial", "complete", m)
	if err != nil {
		t.Fatal(err)
	}
	cols = columns(t, renderPage(t, viz.ExplorerOptions{LookPath: noDot}, tr))
	if len(cols) != 2 {
		t.Fatalf("%d columns, want 2", len(cols))
	}
	got := map[string]string{}
	for _, mm := range origLineRE.FindAllStringSubmatch(cols[1], -1) {
		line, title, _ := origin(t, mm)
		got[strings.Fields(line)[1]] = title
	}
	if w := "x_next dim 0: split along mesh dim 0 (dp), from var x\n  op 1 relu: x dim 0 -> y dim 0\n  op 3 scale: y dim 0 -> x_next dim 0\nx_next dim 1: replicated"; got["x_next"] != w {
		t.Errorf("x_next's origin (block 1):\n%s\nwant:\n%s", got["x_next"], w)
	}
}
