package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/viz"
)

// renderDOT draws one program with default options, for -dump-dir.
func renderDOT(p *ir.Program) []byte { return viz.DOT(p, viz.Options{}) }

// intList collects -block 1 -block 2 or -block 1,2.
type intList []int

func (l *intList) String() string {
	parts := make([]string, len(*l))
	for i, x := range *l {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}

func (l *intList) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		x, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || x < 0 {
			return fmt.Errorf("block index %q is not a non-negative integer", part)
		}
		*l = append(*l, x)
	}
	return nil
}

func runDot(env *Env, args []string) int {
	fs := newFlagSet(env, "dot", "[-program main|startup] [-block N] [-hide-vars] [-max-nodes N] [FILE|-]",
		`Dot draws a program of the module as a Graphviz digraph on stdout: a
cluster per block, ops coloured by role, collectives highlighted, vars
with dtype, shape and dims_mapping. Render it with: dot -Tsvg -o out.svg`)
	program := fs.String("program", "main", "the program to draw: main or startup")
	var blocks intList
	fs.Var(&blocks, "block", "draw only block `N` (repeat or comma-separate for several)")
	hideVars := fs.Bool("hide-vars", false, "draw ops only, with data-flow edges labelled by var")
	maxNodes := fs.Int("max-nodes", 0, "draw at most `N` nodes, noting what was cut (0: no cap)")
	files, code, ok := parseFlagsAnywhere(env, fs, args)
	if !ok {
		return code
	}
	in, m, code, ok := loadOne(env, "dot", files)
	if !ok {
		return code
	}
	var p *ir.Program
	switch *program {
	case "main":
		p = m.Main
	case "startup":
		p = m.Startup
	default:
		fmt.Fprintf(env.Stderr, "distpass dot: unknown program %q (want main or startup)\n", *program)
		return ExitUsage
	}
	if p == nil {
		fmt.Fprintf(env.Stderr, "%s: module has no %s program\n", in.name, *program)
		return ExitFail
	}
	for _, b := range blocks {
		if b >= len(p.Blocks) {
			fmt.Fprintf(env.Stderr, "%s: program %s has no block %d (it has %d)\n", in.name, *program, b, len(p.Blocks))
			return ExitFail
		}
	}
	env.Stdout.Write(viz.DOT(p, viz.Options{Blocks: blocks, HideVars: *hideVars, MaxNodes: *maxNodes}))
	return ExitOK
}
