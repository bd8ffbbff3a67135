package viz

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"html"
	"html/template"
	"io"
	"iter"
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
	pg := explorerPage{
		Title: opts.Title,
		CSS:   template.CSS(explorerCSS),
		JS:    template.JS(explorerJS),
	}
	if pg.Title == "" {
		pg.Title = "distpass pass explorer"
	}
	dot := newDotRunner(opts)
	pg.NoDot = dot.missing
	for i, t := range traces {
		pg.Runs = append(pg.Runs, newRunView(i, t, dot, opts.MaxNodes))
	}
	var buf bytes.Buffer
	if err := explorerTemplate.Execute(&buf, &pg); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// explorerPage and the views below are what the page's template shows;
// html/template escapes every string in them for where it lands.
type explorerPage struct {
	Title string
	CSS   template.CSS
	JS    template.JS
	NoDot bool
	Runs  []runView
}

// runView is one trace's tab panel: a summary and the columns.
type runView struct {
	Name, Pipeline, Err string
	Execs, Changed      int
	Cols                iter.Seq[colView]
}

// colView is one version: its head, its text with the lines changed
// since the column before highlighted, and the drawing of main's block 0.
type colView struct {
	ID, Label, Parent string
	Failed, First     bool
	Added, Removed    int
	Also              []Merged
	Err, Stack        string
	Lines             []lineView
	RemovedAtEnd      int
	Graph             graphView
}

// lineView is a line of module text, var names and op ids as spans.
type lineView struct {
	Add     bool
	Removed int // lines removed just above it
	Segs    []segView
	// Origin, on a var declaration of a complete column's main program,
	// is where the var's mapping came from, a line per dim; OriginTitle
	// is it as the line's title attribute (with Removed's note).
	Origin      string
	OriginTitle template.HTMLAttr
}

// originTitle is a title attribute of s, its newlines kept as line
// breaks (html/template would leave them raw in the attribute, where
// they are lines of the page's source).
func originTitle(removed int, s string) template.HTMLAttr {
	if removed > 0 {
		s = fmt.Sprintf("%d %s removed above\n\n%s", removed, plural(removed, "line", "lines"), s)
	}
	s = strings.ReplaceAll(html.EscapeString(s), "\n", "&#10;")
	return template.HTMLAttr(` title="` + s + `"`) // escaped above: no quote, tag or entity of s survives
}

// segView is a run of a line's text: plain, or (with a key) a var name
// or op id.
type segView struct {
	Text, Key string // Key: the span's data-var or data-op
	Op        bool
}

// graphView is the drawing of main's block 0, or why there is none.
type graphView struct {
	NoMain, NoDot bool
	Err           string
	SVG           template.HTML // from Graphviz, ids prefixed by the column's
}

func newRunView(i int, t *Trace, dot *dotRunner, maxNodes int) runView {
	r := runView{Name: t.Name, Pipeline: t.Pipeline, Err: t.Err}
	for j, v := range t.Versions {
		r.Execs += len(v.Also)
		if j > 0 {
			r.Execs++
			if v.Hash != t.Versions[j-1].Hash {
				r.Changed++
			}
		}
	}
	// The columns are made as the template reaches them: one column's
	// lines, not the page's, are held at a time.
	r.Cols = func(yield func(colView) bool) {
		var prev []byte
		for j, v := range t.Versions {
			text := ir.Print(v.Module)
			id := fmt.Sprintf("r%d-c%d", i, j)
			c := colView{ID: id, Label: v.Label, Parent: v.Parent, Failed: v.Failed, First: j == 0,
				Also: v.Also, Graph: newGraphView(id, v.Module, dot, maxNodes)}
			if v.Failed {
				c.Err, c.Stack = v.Err, string(v.Stack)
			}
			var d lineDiff
			if j > 0 {
				d = diffLines(prev, text)
				c.Added, c.Removed = d.added, d.removed
			}
			c.Lines, c.RemovedAtEnd = textLines(text, d, v.origins)
			if !yield(c) {
				return
			}
			prev = text
		}
	}
	return r
}

// textLines splits the module's text into lines, var names and op ids as
// spans, and returns them with the count of lines removed after the last.
// A declaration of a var of the main program that origins has gets its
// text.
func textLines(text []byte, d lineDiff, origins map[originKey]string) ([]lineView, int) {
	marks := markText(text)
	str := string(text) // one copy: the segments are its substrings
	var lines []lineView
	for start := 0; start < len(text); {
		end := bytes.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		n := len(lines)
		l := lineView{Add: d.add != nil && d.add[n], Removed: d.removedAt(n)}
		at := start
		for len(marks) > 0 && marks[0].start < end {
			m := marks[0]
			marks = marks[1:]
			if m.decl && m.prog == "main" && origins != nil {
				name := m.key
				if u, err := strconv.Unquote(name); err == nil && name[0] == '"' {
					name = u
				}
				if l.Origin = strings.TrimSuffix(origins[originKey{m.block, name}], "\n"); l.Origin != "" {
					l.OriginTitle = originTitle(l.Removed, l.Origin)
				}
			}
			l.Segs = append(l.Segs, segView{Text: str[at:m.start]},
				segView{Text: str[m.start:m.end], Key: m.key, Op: m.op})
			at = m.end
		}
		l.Segs = append(l.Segs, segView{Text: str[at:end]})
		lines = append(lines, l)
		start = end + 1
	}
	return lines, d.removedAt(len(lines))
}

func newGraphView(id string, m *ir.Module, dot *dotRunner, maxNodes int) graphView {
	switch {
	case m.Main == nil:
		return graphView{NoMain: true}
	case dot.missing:
		return graphView{NoDot: true}
	}
	svg, err := dot.svg(DOT(m.Main, Options{Blocks: []int{0}, MaxNodes: maxNodes}))
	if err != "" {
		return graphView{Err: err}
	}
	// Graphviz numbers its ids per drawing; the column's id keeps them
	// unique in the page. Its output is trusted as the page's own.
	return graphView{SVG: template.HTML(bytes.ReplaceAll(svg, []byte(` id="`), []byte(` id="`+id+"-")))}
}

//go:embed explorer.html
var explorerHTML string

var explorerTemplate = template.Must(template.New("explorer").
	Funcs(template.FuncMap{"plural": plural, "max": func(a, b int) int { return max(a, b) }}).Parse(explorerHTML))

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
