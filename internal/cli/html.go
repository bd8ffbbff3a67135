package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/viz"
)

// htmlMaxNodes caps the drawings of run -html, as html's -max-nodes does
// by default.
const htmlMaxNodes = 60

func runHTML(env *Env, args []string) int {
	fs := newFlagSet(env, "html", "-pipeline P [-o FILE] [-max-nodes N] [FILE|-]",
		`Html runs the pipeline over the module and writes one HTML page, the
pass explorer: a column per pass that changed the module (the input
first; passes that changed nothing are listed under the column before),
changed lines highlighted, clickable var names and op ids, and a drawing
of main's block 0 per column when Graphviz's dot is installed. In the
column of the complete pass, each var's declaration says where its
sharding came from (hover it, or click its name). When the
pipeline names $RANK, it runs once per rank of the module's meshes, with
$RANK replaced, on a copy of the module: a tab per rank. A failed pass
still writes the page, its column marked, and exits 1.`)
	pipeline := fs.String("pipeline", "", "the pass pipeline, e.g. 'verify,partition{rank=$RANK}' (see distpass passes)")
	out := fs.String("o", "", "write the page to `FILE` (default, or -: stdout)")
	maxNodes := fs.Int("max-nodes", htmlMaxNodes, "draw at most `N` nodes of main's block 0 per column (0: no cap)")
	files, code, ok := parseFlagsAnywhere(env, fs, args)
	if !ok {
		return code
	}
	if *pipeline == "" {
		fmt.Fprintln(env.Stderr, "distpass html: -pipeline is required (see distpass passes)")
		return ExitUsage
	}
	in, m, code, ok := loadOne(env, "html", files)
	if !ok {
		return code
	}

	// One run per rank when the pipeline names $RANK, else one, named
	// for the input.
	runs, ok := parseRuns(env, "html", in.name, m, *pipeline)
	if !ok {
		return ExitFail
	}
	recs := make([]*viz.Recorder, len(runs))
	for i, r := range runs {
		recs[i] = &viz.Recorder{Name: in.name}
		if r.rank >= 0 {
			recs[i].Name = r.name()
		}
	}
	runAll(context.Background(), m, runs, func(i int) []passes.Instrument { return []passes.Instrument{recs[i]} }, nil)
	code = ExitOK
	var traces []*viz.Trace
	for i, r := range runs {
		if r.err != nil {
			printErr(env, r.where(in.name), r.err)
			code = ExitFail
		}
		traces = append(traces, recs[i].Trace())
	}
	title := "distpass html " + in.name
	if err := writeExplorer(env, *out, title, traces, *maxNodes); err != nil {
		fmt.Fprintf(env.Stderr, "distpass html: %v\n", err)
		return ExitFail
	}
	return code
}

// writeExplorer writes the pass explorer page of traces to out, or to
// stdout when out is "" or "-".
func writeExplorer(env *Env, out, title string, traces []*viz.Trace, maxNodes int) error {
	var buf bytes.Buffer
	if err := viz.WriteExplorer(&buf, traces, viz.ExplorerOptions{Title: title, MaxNodes: maxNodes}); err != nil {
		return err
	}
	if isStdout(out) {
		_, err := env.Stdout.Write(buf.Bytes())
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}
