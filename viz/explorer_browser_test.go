//go:build linux

package viz_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/viz"
)

const chromiumPath = "/usr/bin/chromium"

// TestExplorerInChromium loads a page in headless Chromium and uses it as
// a person would: it counts the columns, clicks var names and checks
// their highlights in every column, switches tabs, and saves a
// screenshot (to $DISTPASS_SCREENSHOT when set).
func TestExplorerInChromium(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("DISTPASS_REQUIRE_CHROMIUM") == "1" {
			t.Fatalf("%s not found, and DISTPASS_REQUIRE_CHROMIUM=1", chromiumPath)
		}
		t.Skipf("%s not found", chromiumPath)
	}
	dir := t.TempDir()
	m := mlp(t)
	texts, _ := expectedColumns(t, explorerPipeline, m)
	tr, err := record(t, passes.DefaultRegistry(), "serial", explorerPipeline, m.Clone())
	if err != nil {
		t.Fatal(err)
	}
	_, dotErr := exec.LookPath("dot")
	pagePath := filepath.Join(dir, "explorer.html")
	if err := os.WriteFile(pagePath, []byte(renderPage(t, viz.ExplorerOptions{MaxNodes: 60}, tr)), 0o644); err != nil {
		t.Fatal(err)
	}
	var ranks []*viz.Trace
	for _, r := range []string{"0", "1"} {
		tr, err := record(t, passes.DefaultRegistry(), "rank "+r, "partition{rank="+r+"}", m.Clone())
		if err != nil {
			t.Fatal(err)
		}
		ranks = append(ranks, tr)
	}
	tabsPath := filepath.Join(dir, "tabs.html")
	if err := os.WriteFile(tabsPath, []byte(renderPage(t, viz.ExplorerOptions{LookPath: noDot}, ranks...)), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx := startChromium(t)
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	do("load the page",
		chromedp.EmulateViewport(1600, 1000),
		chromedp.Navigate("file://"+pagePath),
		chromedp.WaitVisible(chromedp.CSS("#r0-c0")),
	)

	cols := eval[int](t, ctx, `document.querySelectorAll("#r0 > .cols > .col").length`)
	if cols != len(texts) {
		t.Errorf("the page shows %d columns, want %d (the passes that changed the module + 1)", cols, len(texts))
	}
	perCol := eval[[]int](t, ctx, `Array.from(document.querySelectorAll("#r0 .col")).map(c => c.querySelectorAll('.ir .var[data-var="w1"]').length)`)
	for i, n := range perCol {
		if n == 0 {
			t.Fatalf("column %d shows no w1", i)
		}
	}

	// highlights says, for a var, how many of its spans are highlighted,
	// in which colours, in how many columns all of them are, and how many
	// drawing nodes show it highlighted.
	type highlights struct {
		Spans, Lit, FullColumns, GraphNodes, Graphs int
		Colours                                     []string
	}
	state := func(name string) highlights {
		t.Helper()
		return eval[highlights](t, ctx, `(() => {
			const name = `+strconv.Quote(name)+`;
			const spans = Array.from(document.querySelectorAll('.ir .var[data-var="' + name + '"]'));
			const lit = spans.filter(s => s.classList.contains("hl"));
			const colours = new Set(lit.flatMap(s => Array.from(s.classList).filter(c => /^hl\d$/.test(c))));
			const full = Array.from(document.querySelectorAll("#r0 .col")).filter(c =>
				Array.from(c.querySelectorAll('.ir .var[data-var="' + name + '"]')).every(s => s.classList.contains("hl"))).length;
			const nodes = Array.from(document.querySelectorAll(".graph g.node.hl")).filter(g => g.querySelector("text").textContent === name);
			return {Spans: spans.length, Lit: lit.length, FullColumns: full, GraphNodes: nodes.length,
				Graphs: document.querySelectorAll(".graph svg").length, Colours: Array.from(colours)};
		})()`)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll(".hl").length`); n != 0 {
		t.Fatalf("%d elements are highlighted before any click", n)
	}

	do("click w1", chromedp.Click(chromedp.CSS(`#r0-c0 .ir .var[data-var="w1"]`)))
	w1 := state("w1")
	if w1.Lit != w1.Spans || w1.FullColumns != cols || len(w1.Colours) != 1 {
		t.Errorf("after a click on w1: %d of %d spans highlighted, in %d of %d columns, colours %q",
			w1.Lit, w1.Spans, w1.FullColumns, cols, w1.Colours)
	}
	if dotErr == nil && (w1.Graphs != cols || w1.GraphNodes != cols) {
		t.Errorf("after a click on w1: %d drawings, %d of their w1 nodes highlighted, want %d", w1.Graphs, w1.GraphNodes, cols)
	}
	if others := eval[int](t, ctx, `Array.from(document.querySelectorAll(".ir .hl")).filter(s => s.dataset.var !== "w1").length`); others != 0 {
		t.Errorf("%d other spans are highlighted too", others)
	}

	// A second var takes another colour; a second click on w1 clears it
	// alone.
	do("click x", chromedp.Click(chromedp.CSS(`#r0-c1 .ir .var[data-var="x"]`)))
	x := state("x")
	if x.Lit != x.Spans || x.FullColumns != cols || len(x.Colours) != 1 || x.Colours[0] == w1.Colours[0] {
		t.Errorf("after a click on x: %d of %d spans highlighted, colours %q (w1's %q)", x.Lit, x.Spans, x.Colours, w1.Colours)
	}
	do("click w1 again", chromedp.Click(chromedp.CSS(`#r0-c1 .ir .var[data-var="w1"]`)))
	if s := state("w1"); s.Lit != 0 || s.GraphNodes != 0 {
		t.Errorf("a second click left %d w1 spans and %d nodes highlighted", s.Lit, s.GraphNodes)
	}
	if s := state("x"); s.Lit != x.Spans {
		t.Errorf("clearing w1 cleared x too")
	}
	do("click w1 once more", chromedp.Click(chromedp.CSS(`#r0-c0 .ir .var[data-var="w1"]`)))
	if s := state("w1"); s.Lit != s.Spans {
		t.Errorf("w1 is not highlighted again")
	}

	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(shot, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("the screenshot is not a PNG")
	}
	shotPath := os.Getenv("DISTPASS_SCREENSHOT")
	if shotPath == "" {
		shotPath = filepath.Join(t.TempDir(), "explorer.png")
	}
	if err := os.WriteFile(shotPath, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shotPath)

	// A column folds when its title is clicked.
	do("fold", chromedp.Click(chromedp.CSS(`#r0-c0 > .head > h2`)))
	if w := eval[float64](t, ctx, `document.querySelector("#r0-c0 .ir").offsetWidth`); w != 0 {
		t.Errorf("a folded column still shows its text (%v px wide)", w)
	}

	// Tabs: one run shown at a time.
	do("load the tabs page",
		chromedp.Navigate("file://"+tabsPath),
		chromedp.WaitVisible(chromedp.CSS("#r0-c0")),
	)
	shown := func() string {
		t.Helper()
		return eval[string](t, ctx, `Array.from(document.querySelectorAll("section.run")).map(s =>
			s.id + (s.offsetParent !== null ? "+" : "-")).join(" ")`)
	}
	if got := shown(); got != "r0+ r1-" {
		t.Errorf("at load, runs shown: %q, want r0+ r1-", got)
	}
	do("click the rank 1 tab", chromedp.Click(chromedp.CSS("#tab-r1")))
	if got := shown(); got != "r0- r1+" {
		t.Errorf("after a click on rank 1's tab, runs shown: %q, want r0- r1+", got)
	}
	if got := eval[string](t, ctx, `document.querySelector("#r1 .col:last-child .ir").textContent`); !strings.Contains(got, "program main rank 1 {") {
		t.Errorf("rank 1's tab does not show rank 1's program")
	}

	// The complete pass's column: a var's declaration tells, on hover (its
	// title) and on a click on its name (a panel below it), where its
	// mapping came from; a second click hides the panel.
	src, err := os.ReadFile("../examples/gpt_bare.dpir")
	if err != nil {
		t.Fatal(err)
	}
	gpt, err := ir.Parse("gpt_bare.dpir", src)
	if err != nil {
		t.Fatal(err)
	}
	tr, err = record(t, passes.DefaultRegistry(), "serial", "complete,partition{rank=0}", gpt)
	if err != nil {
		t.Fatal(err)
	}
	completePath := filepath.Join(dir, "complete.html")
	if err := os.WriteFile(completePath, []byte(renderPage(t, viz.ExplorerOptions{LookPath: noDot}, tr)), 0o644); err != nil {
		t.Fatal(err)
	}
	do("load the complete page",
		chromedp.Navigate("file://"+completePath),
		chromedp.WaitVisible(chromedp.CSS("#r0-c1")),
	)
	type originState struct {
		Title, Panel string
		Shown        bool
		Elsewhere    int
	}
	const decl = `Array.from(document.querySelectorAll("#r0-c1 .l.orig")).find(l => /^\s*param l0_fc1_b /.test(l.textContent))`
	origin := func() originState {
		t.Helper()
		return eval[originState](t, ctx, `(() => {
			const l = `+decl+`;
			const p = l.nextElementSibling;
			return {Title: l.title, Panel: p.classList.contains("origin") ? p.textContent : "", Shown: p.offsetParent !== null,
				Elsewhere: document.querySelectorAll(".col:not(#r0-c1) .orig, .col:not(#r0-c1) .origin").length};
		})()`)
	}
	const want = "l0_fc1_b dim 0: split along mesh dim 1 (mp), from var l0_fc1_w\n" +
		"  op 44 matmul_v2: l0_fc1_w dim 1 -> l0_fc1_mm dim 2\n" +
		"  op 45 elementwise_add: l0_fc1_mm dim 2 -> l0_fc1_b dim 0"
	if o := origin(); o.Title != want || o.Panel != want || o.Shown || o.Elsewhere != 0 {
		t.Errorf("at load: l0_fc1_b's declaration has title %q, panel %q, shown %v; %d origins in other columns; want the title and panel %q, hidden",
			o.Title, o.Panel, o.Shown, o.Elsewhere, want)
	}
	do("click l0_fc1_b's declaration", chromedp.Click(chromedp.JSPath(decl+`.querySelector(".var")`)))
	if o := origin(); !o.Shown {
		t.Errorf("a click on l0_fc1_b's name does not show its origin")
	}
	if n := eval[int](t, ctx, `Array.from(document.querySelectorAll(".origin")).filter(p => p.offsetParent !== null).length`); n != 1 {
		t.Errorf("%d origin panels shown, want l0_fc1_b's alone", n)
	}
	do("click it again", chromedp.Click(chromedp.JSPath(decl+`.querySelector(".var")`)))
	if o := origin(); o.Shown {
		t.Errorf("a second click on l0_fc1_b's name leaves its origin shown")
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// startChromium starts a headless Chromium for the test, and kills it and
// every process it started when the test ends. The whole test has 60
// seconds.
func startChromium(t *testing.T) context.Context {
	userData := t.TempDir() // removed after the cleanup below has run
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	var cmd *exec.Cmd
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(userData),
		chromedp.ModifyCmdFunc(func(c *exec.Cmd) {
			// A process group of its own, to kill Chromium's helpers with
			// it; and killed should the test binary die.
			if c.SysProcAttr == nil {
				c.SysProcAttr = &syscall.SysProcAttr{}
			}
			c.SysProcAttr.Setpgid = true
			c.SysProcAttr.Pdeathsig = syscall.SIGKILL
			cmd = c
		}),
	)
	bctx, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc() // kills the browser and waits for it
		cancel()
		if cmd != nil && cmd.Process != nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		// Helpers that left the group still name the profile directory.
		deadline := time.Now().Add(5 * time.Second)
		for {
			pids := processesUsing(userData)
			if len(pids) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("Chromium processes %v outlived the test", pids)
				return
			}
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	return bctx
}

// processesUsing returns the live processes whose command line names dir.
func processesUsing(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte("--user-data-dir="+dir)) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if i := bytes.LastIndexByte(stat, ')'); i >= 0 && bytes.HasPrefix(stat[i+1:], []byte(" Z")) {
				continue // a zombie, dead already
			}
		}
		pids = append(pids, pid)
	}
	return pids
}
