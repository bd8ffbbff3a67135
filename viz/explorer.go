package viz

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"html"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/distpass/distpass/ir"
)

// The pass explorer: one self-contained HTML page of recorded runs, after
// the Go compiler's ssa.html. See "The pass explorer" in the package doc.

//go:embed explorer.css
var explorerCSS string

//go:embed explorer.js
var explorerJS string

// ExplorerOptions say how WriteExplorer draws a page.
type ExplorerOptions struct {
	// Title heads the page; "" is "distpass pass explorer".
	Title string
	// MaxNodes caps each drawing of main's block 0, as Options.MaxNodes
	// does (0 or less: no cap). Graphviz is slow past a few hundred nodes.
	MaxNodes int
	// LookPath finds Graphviz's dot; nil is exec.LookPath. When it fails,
	// the page says so in place of the drawings.
	LookPath func(file string) (string, error)
	// DotTimeout bounds each run of dot; 0 is DefaultDotTimeout.
	DotTimeout time.Duration
}

// DefaultDotTimeout bounds each run of dot when ExplorerOptions.DotTimeout
// is 0.
const DefaultDotTimeout = 30 * time.Second

// WriteExplorer writes one HTML page of the recorded runs, a tab per
// trace, in order. The page needs nothing else: its CSS and script are
// inline. It depends only on the traces and the options, except for the
// drawings, which are what the installed Graphviz makes of them.
func WriteExplorer(w io.Writer, traces []*Trace, opts ExplorerOptions) error {
	title := opts.Title
	if title == "" {
		title = "distpass pass explorer"
	}
	pg := &page{dot: newDotRunner(opts), maxNodes: opts.MaxNodes}
	b := &pg.buf
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"generator\" content=\"distpass\">\n")
	fmt.Fprintf(b, "<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n", html.EscapeString(title), explorerCSS)
	fmt.Fprintf(b, "<header>\n<h1>%s</h1>\n", html.EscapeString(title))
	b.WriteString("<p class=\"help\">A column per pass that changed the module, the input first; " +
		"passes that changed nothing are listed under the column they left as it was. " +
		"Lines a pass changed are <span class=\"l add\">highlighted</span>; a red rule marks where it removed lines. " +
		"Click a var name or an op id to highlight it in every column and drawing, again to clear it; " +
		"click a column's title to fold it.</p>\n")
	if pg.dot.missing {
		b.WriteString("<p class=\"nodot\">Graphviz (dot) is not installed: the drawings of main's block 0 are left out.</p>\n")
	}
	b.WriteString("</header>\n<nav class=\"tabs\" role=\"tablist\">\n")
	for i, t := range traces {
		fmt.Fprintf(b, "<button type=\"button\" class=\"tab\" role=\"tab\" id=\"tab-r%d\" aria-controls=\"r%d\" aria-selected=\"%t\">%s</button>\n",
			i, i, i == 0, html.EscapeString(t.Name))
	}
	b.WriteString("</nav>\n")
	for i, t := range traces {
		pg.run(i, t)
	}
	fmt.Fprintf(b, "<script>\n%s</script>\n</body>\n</html>\n", explorerJS)
	_, err := w.Write(b.Bytes())
	return err
}

type page struct {
	buf      bytes.Buffer
	dot      *dotRunner
	maxNodes int
}

// run writes one trace's tab panel: a summary and the columns.
func (pg *page) run(i int, t *Trace) {
	b := &pg.buf
	hidden := ""
	if i > 0 {
		hidden = " hidden"
	}
	fmt.Fprintf(b, "<section class=\"run\" id=\"r%d\" role=\"tabpanel\" aria-labelledby=\"tab-r%d\"%s>\n", i, i, hidden)
	execs, changed := 0, 0
	for j, v := range t.Versions {
		execs += len(v.Also)
		if j > 0 {
			execs++
			if v.Hash != t.Versions[j-1].Hash {
				changed++
			}
		}
	}
	fmt.Fprintf(b, "<p class=\"summary\">pipeline <code>%s</code>: %d %s, %d changed the module.</p>\n",
		html.EscapeString(t.Pipeline), execs, plural(execs, "execution", "executions"), changed)
	if t.Err != "" {
		fmt.Fprintf(b, "<p class=\"error\">The run failed: %s</p>\n", html.EscapeString(t.Err))
	}
	b.WriteString("<div class=\"cols\">\n")
	var prev []byte
	for j, v := range t.Versions {
		text := ir.Print(v.Module)
		pg.column(fmt.Sprintf("r%d-c%d", i, j), v, prev, text, j == 0)
		prev = text
	}
	b.WriteString("</div>\n</section>\n")
}

// column writes one version: its head, its text with the lines changed
// since prev highlighted, and the drawing of main's block 0.
func (pg *page) column(id string, v *Version, prev, text []byte, first bool) {
	b := &pg.buf
	class := "col"
	if v.Failed {
		class += " failed"
	}
	fmt.Fprintf(b, "<div class=%q id=%q>\n<div class=\"head\">\n<h2 title=\"fold or unfold\">%s</h2>\n", class, id, html.EscapeString(v.Label))
	if v.Parent != "" {
		fmt.Fprintf(b, "<p class=\"parent\">in %s</p>\n", html.EscapeString(v.Parent))
	}
	var d lineDiff
	if !first {
		d = diffLines(prev, text)
		if d.added+d.removed == 0 {
			b.WriteString("<p class=\"stat\">unchanged</p>\n")
		} else {
			fmt.Fprintf(b, "<p class=\"stat\">+%d −%d %s</p>\n", d.added, d.removed, plural(max(d.added, d.removed), "line", "lines"))
		}
	}
	if len(v.Also) > 0 {
		b.WriteString("<p class=\"also\">also: ")
		for k, m := range v.Also {
			if k > 0 {
				b.WriteString(", ")
			}
			b.WriteString(html.EscapeString(m.Label))
			if m.Skipped {
				b.WriteString(" skipped")
			}
		}
		b.WriteString("</p>\n")
	}
	if v.Failed {
		fmt.Fprintf(b, "<p class=\"err\">failed: %s</p>\n", html.EscapeString(v.Err))
		if len(v.Stack) > 0 {
			fmt.Fprintf(b, "<details><summary>stack</summary><pre>%s</pre></details>\n", html.EscapeString(string(v.Stack)))
		}
	}
	b.WriteString("</div>\n")
	pg.text(text, d)
	pg.graph(id, v.Module)
	b.WriteString("</div>\n")
}

// text writes the module's text a div per line, var names and op ids as
// spans.
func (pg *page) text(text []byte, d lineDiff) {
	b := &pg.buf
	marks := markText(text)
	b.WriteString("<div class=\"ir\">\n")
	line, start := 0, 0
	for start < len(text) {
		end := bytes.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		b.WriteString("<div class=\"l")
		if d.add != nil && d.add[line] {
			b.WriteString(" add")
		}
		if n := d.removedAt(line); n > 0 {
			fmt.Fprintf(b, " del\" title=\"%d %s removed above", n, plural(n, "line", "lines"))
		}
		b.WriteString("\">")
		at := start
		for len(marks) > 0 && marks[0].start < end {
			m := marks[0]
			marks = marks[1:]
			b.WriteString(html.EscapeString(string(text[at:m.start])))
			kind := "var"
			if m.op {
				kind = "op"
			}
			fmt.Fprintf(b, "<span class=\"%s\" data-%s=\"%s\">%s</span>", kind, kind,
				html.EscapeString(m.key), html.EscapeString(string(text[m.start:m.end])))
			at = m.end
		}
		b.WriteString(html.EscapeString(string(text[at:end])))
		b.WriteString("</div>\n")
		start = end + 1
		line++
	}
	if n := d.removedAt(line); n > 0 {
		fmt.Fprintf(b, "<div class=\"l del end\" title=\"%d %s removed above\"></div>\n", n, plural(n, "line", "lines"))
	}
	b.WriteString("</div>\n")
}

// graph writes the drawing of main's block 0, or why there is none.
func (pg *page) graph(id string, m *ir.Module) {
	b := &pg.buf
	b.WriteString("<div class=\"graph\">\n")
	switch {
	case m.Main == nil:
		b.WriteString("<p class=\"nograph\">The module has no main program.</p>\n")
	case pg.dot.missing:
		b.WriteString("<p class=\"nograph nodot\">Graphviz (dot) is not installed: no drawing.</p>\n")
	default:
		svg, err := pg.dot.svg(DOT(m.Main, Options{Blocks: []int{0}, MaxNodes: pg.maxNodes}))
		if err != "" {
			fmt.Fprintf(b, "<p class=\"nograph\">%s</p>\n", html.EscapeString(err))
			break
		}
		// Graphviz numbers its ids per drawing; the column's id keeps
		// them unique in the page.
		b.Write(bytes.ReplaceAll(svg, []byte(` id="`), []byte(` id="`+id+"-")))
		b.WriteByte('\n')
	}
	b.WriteString("</div>\n")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// lineDiff says how a text's lines differ from the text before it.
type lineDiff struct {
	add            []bool // by line of the new text: not in the old one
	removedBefore  []int  // by line of the new text (and one past the end): old lines removed just before it
	added, removed int
}

func (d lineDiff) removedAt(line int) int {
	if line < len(d.removedBefore) {
		return d.removedBefore[line]
	}
	return 0
}

// diffLines compares old and new line by line, through the unified diff
// of github.com/rogpeppe/go-internal/diff.
func diffLines(old, new []byte) lineDiff {
	n := bytes.Count(new, []byte("\n"))
	if len(new) > 0 && new[len(new)-1] != '\n' {
		n++
	}
	d := lineDiff{add: make([]bool, n), removedBefore: make([]int, n+1)}
	u := diff.Diff("old", old, "new", new)
	lines := strings.Split(string(u), "\n")
	at := -1 // the new text's line; -1 before the first hunk
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "@@ "):
			// @@ -a,b +c,d @@: the hunk starts at new line c (1-based),
			// or after line c when it has no new lines.
			f := strings.Fields(l)
			if len(f) < 3 {
				continue
			}
			c, count, _ := strings.Cut(strings.TrimPrefix(f[2], "+"), ",")
			at, _ = strconv.Atoi(c)
			if count != "0" {
				at--
			}
		case at < 0 || l == "":
		case l[0] == '+':
			if at < n {
				d.add[at] = true
			}
			d.added++
			at++
		case l[0] == '-':
			if at <= n {
				d.removedBefore[at]++
			}
			d.removed++
		case l[0] == ' ':
			at++
		}
	}
	return d
}

// dotRunner renders DOT to SVG with Graphviz, remembering what it drew:
// versions that change only the startup program draw the same main.
type dotRunner struct {
	path    string
	missing bool
	timeout time.Duration
	done    map[string]dotResult
}

type dotResult struct {
	svg []byte
	err string
}

func newDotRunner(opts ExplorerOptions) *dotRunner {
	look := opts.LookPath
	if look == nil {
		look = exec.LookPath
	}
	d := &dotRunner{timeout: opts.DotTimeout, done: map[string]dotResult{}}
	if d.timeout <= 0 {
		d.timeout = DefaultDotTimeout
	}
	path, err := look("dot")
	if err != nil {
		d.missing = true
	}
	d.path = path
	return d
}

// svg returns the <svg> element dot makes of src, or a one-line reason.
func (d *dotRunner) svg(src []byte) ([]byte, string) {
	if r, ok := d.done[string(src)]; ok {
		return r.svg, r.err
	}
	r := d.run(src)
	d.done[string(src)] = r
	return r.svg, r.err
}

func (d *dotRunner) run(src []byte) dotResult {
	ctx, cancel := context.WithTimeout(context.Background(), d.timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, d.path, "-Tsvg")
	cmd.Stdin = bytes.NewReader(src)
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second // a child of dot that holds the pipes open
	err := cmd.Run()
	if ctx.Err() != nil {
		return dotResult{err: fmt.Sprintf("dot took longer than %v: no drawing.", d.timeout)}
	}
	if err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		if msg == "" {
			msg = err.Error()
		}
		return dotResult{err: "dot failed: " + msg}
	}
	out := stdout.Bytes()
	i := bytes.Index(out, []byte("<svg"))
	if i < 0 {
		return dotResult{err: "dot wrote no <svg> element."}
	}
	return dotResult{svg: bytes.TrimSpace(out[i:])}
}
