package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// listFlag collects a comma-separated list, for -print-before=a,b.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error {
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			*l = append(*l, x)
		}
	}
	return nil
}

func runPasses(env *Env, args []string) int {
	fs := newFlagSet(env, "passes", "", "Passes lists every pass with its doc and options, and the rules on their order.")
	if code, ok := parseFlags(env, fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "distpass passes: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	r := passes.DefaultRegistry()
	w := env.Stdout
	for _, p := range r.Passes() {
		fmt.Fprintf(w, "%s\n", p.Name)
		for i, line := range strings.Split(p.Doc, "\n") {
			if i == 0 {
				fmt.Fprintf(w, "    %s.\n", strings.TrimSuffix(line, "."))
				continue
			}
			fmt.Fprintf(w, "    %s\n", line)
		}
		for _, o := range p.Options {
			def := o.Default
			if def == "" {
				def = `""`
			}
			fmt.Fprintf(w, "    {%s=%s} %s, default %s: %s\n", o.Name, strings.ToUpper(o.Kind.String()), o.Kind, def, o.Doc)
		}
		var notes []string
		if p.Nested {
			notes = append(notes, "takes a sub-pipeline: "+p.Name+"(…)")
		}
		if p.Required {
			notes = append(notes, "required: runs beyond -bisect-limit")
		}
		if p.PreservesAll {
			notes = append(notes, "preserves every analysis")
		}
		if len(notes) > 0 {
			fmt.Fprintf(w, "    (%s)\n", strings.Join(notes, "; "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "order rules:")
	for _, o := range r.OrderRules() {
		fmt.Fprintf(w, "    %s before %s: %s\n", o.Before, o.After, o.Why)
	}
	return ExitOK
}

func runRun(env *Env, args []string) int {
	fs := newFlagSet(env, "run", "-pipeline P [flags] [FILE|-]\n       distpass run -reproducer FILE",
		`Run parses the module, runs the pipeline over it and prints the result.
The instrument flags report on stderr. With -reproducer and no -pipeline,
run replays a reproducer file: its module through its pipeline.`)
	pipeline := fs.String("pipeline", "", "the pass pipeline, e.g. 'verify,dce,canonicalize-names' (see distpass passes)")
	out := fs.String("o", "", "write the module to `FILE` instead of stdout")
	verifyEach := fs.Bool("verify-each", false, "verify the IR before the pipeline and after every pass")
	var before, after listFlag
	fs.Var(&before, "print-before", "print the module before the passes `NAMES` (comma-separated, or all)")
	fs.Var(&after, "print-after", "print the module after the passes `NAMES` (comma-separated, or all)")
	changed := fs.Bool("print-changed", false, "print a diff after every pass that changed the module")
	timePasses := fs.Bool("time-passes", false, "print the wall time of every pass")
	counters := fs.Bool("counters", false, "print ops added, removed and changed, and each pass's own counters")
	bisect := fs.Int("bisect-limit", -1, "run only the first `N` pass executions (required passes always run)")
	dumpDir := fs.String("dump-dir", "", "write the module and its DOT after every pass into `DIR`")
	repro := fs.String("reproducer", "", "on a pass failure, write a reproducer to `FILE`; without -pipeline, replay FILE")
	if code, ok := parseFlags(env, fs, args); !ok {
		return code
	}
	r := passes.DefaultRegistry()
	var m *ir.Module
	text := *pipeline
	if text == "" && *repro != "" {
		if fs.NArg() > 0 {
			fmt.Fprintln(env.Stderr, "distpass run: a replay takes its module from the reproducer, not from FILE")
			return ExitUsage
		}
		data, err := os.ReadFile(*repro)
		if err != nil {
			fmt.Fprintf(env.Stderr, "distpass run: %v\n", err)
			return ExitFail
		}
		text, m, err = passes.ReadReproducer(*repro, data)
		if err != nil {
			fmt.Fprintln(env.Stderr, err)
			return ExitFail
		}
		*repro = "" // a replay that fails must not overwrite what it replays
	} else {
		if text == "" {
			fmt.Fprintln(env.Stderr, "distpass run: -pipeline is required (see distpass passes)")
			return ExitUsage
		}
		if fs.NArg() > 1 {
			fmt.Fprintln(env.Stderr, "distpass run: one FILE at most")
			return ExitUsage
		}
		ins, err := readInputs(env, fs.Args())
		if err != nil {
			fmt.Fprintf(env.Stderr, "distpass run: %v\n", err)
			return ExitFail
		}
		m, err = parse(ins[0])
		if err != nil {
			fmt.Fprintln(env.Stderr, err)
			return ExitFail
		}
	}
	pl, err := r.Parse(text)
	if err != nil {
		fmt.Fprintf(env.Stderr, "distpass run: %v\n", err)
		return ExitUsage
	}
	var insts []passes.Instrument
	if *bisect >= 0 {
		insts = append(insts, &passes.Bisect{Limit: *bisect, W: env.Stderr})
	}
	if *verifyEach {
		insts = append(insts, passes.VerifyEach{})
	}
	if *repro != "" { // after verify-each: a pass that breaks the IR is a failure to reproduce
		insts = append(insts, &passes.Reproducer{Path: *repro})
	}
	if len(before) > 0 || len(after) > 0 {
		insts = append(insts, &passes.PrintIR{W: env.Stderr, Before: before, After: after})
	}
	if *changed {
		insts = append(insts, &passes.PrintChanged{W: env.Stderr})
	}
	if *dumpDir != "" {
		insts = append(insts, &passes.DumpDir{Dir: *dumpDir, Render: renderDOT})
	}
	if *counters {
		insts = append(insts, &passes.Counters{W: env.Stderr})
	}
	if *timePasses {
		insts = append(insts, &passes.TimePasses{W: env.Stderr})
	}
	if err := (&passes.Manager{Instruments: insts}).Run(context.Background(), pl, m); err != nil {
		fmt.Fprintln(env.Stderr, err)
		var pe *passes.PassError
		if errors.As(err, &pe) && pe.Panic != nil {
			fmt.Fprintf(env.Stderr, "%s", pe.Stack)
		}
		return ExitFail
	}
	if *out == "" {
		if err := ir.Fprint(env.Stdout, m); err != nil {
			fmt.Fprintf(env.Stderr, "distpass run: %v\n", err)
			return ExitFail
		}
		return ExitOK
	}
	f, err := os.Create(*out)
	if err == nil {
		err = ir.Fprint(f, m)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "distpass run: %v\n", err)
		return ExitFail
	}
	return ExitOK
}
