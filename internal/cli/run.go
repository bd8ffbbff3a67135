package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/distpass/distpass/internal/par"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/viz"
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
	r := env.passRegistry()
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
			fmt.Fprintf(w, "    {%s=%s} %s, default %s: %s\n", o.Name, strings.ToUpper(o.Kind.String()), o.Constraint(), def, o.Doc)
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

// instrumentFlags are the pass manager's instruments as flags, shared by
// run and partition.
type instrumentFlags struct {
	verifyEach, changed, timePasses, counters *bool
	before, after                             listFlag
	bisect                                    *int
	dumpDir, repro                            *string
	input                                     string              // the module's file name, for errors
	extra                                     []passes.Instrument // after the flags' own
}

func addInstrumentFlags(fs *flag.FlagSet) *instrumentFlags {
	f := &instrumentFlags{}
	f.verifyEach = fs.Bool("verify-each", false, "verify the IR before the pipeline and after every pass, and hold passes that declare PreservesAll to it")
	fs.Var(&f.before, "print-before", "print the module before the passes `NAMES` (comma-separated, or all)")
	fs.Var(&f.after, "print-after", "print the module after the passes `NAMES` (comma-separated, or all)")
	f.changed = fs.Bool("print-changed", false, "print a diff after every pass that changed the module")
	f.timePasses = fs.Bool("time-passes", false, "print the wall time of every pass")
	f.counters = fs.Bool("counters", false, "print ops added, removed and changed, and each pass's own counters")
	f.bisect = fs.Int("bisect-limit", -1, "run only the first `N` pass executions (required passes always run)")
	f.dumpDir = fs.String("dump-dir", "", "write the module and its DOT after every pass into `DIR`")
	f.repro = fs.String("reproducer", "", "on a pass failure, write a reproducer to `FILE`")
	return f
}

func (f *instrumentFlags) instruments(env *Env) []passes.Instrument {
	var insts []passes.Instrument
	if *f.bisect >= 0 {
		insts = append(insts, &passes.Bisect{Limit: *f.bisect, W: env.Stderr})
	}
	if *f.verifyEach {
		insts = append(insts, passes.VerifyEach{})
	}
	if *f.repro != "" { // after verify-each: a pass that breaks the IR is a failure to reproduce
		insts = append(insts, &passes.Reproducer{Path: *f.repro})
	}
	if len(f.before) > 0 || len(f.after) > 0 {
		insts = append(insts, &passes.PrintIR{W: env.Stderr, Before: f.before, After: f.after})
	}
	if *f.changed {
		insts = append(insts, &passes.PrintChanged{W: env.Stderr})
	}
	if *f.dumpDir != "" {
		insts = append(insts, &passes.DumpDir{Dir: *f.dumpDir, Render: renderDOT})
	}
	if *f.counters {
		insts = append(insts, &passes.Counters{W: env.Stderr})
	}
	if *f.timePasses {
		insts = append(insts, &passes.TimePasses{W: env.Stderr})
	}
	return append(insts, f.extra...)
}

func runRun(env *Env, args []string) int {
	fs := newFlagSet(env, "run", "-pipeline P [flags] [FILE|-]\n       distpass run -reproducer FILE",
		`Run parses the module, runs the pipeline over it and prints the result.
The instrument flags report on stderr. With -reproducer and no -pipeline,
run replays a reproducer file: its module through its pipeline.

When the pipeline names $RANK, as 'complete,partition{rank=$RANK}', it
runs once per rank of the module's meshes, $RANK replaced by the rank,
each on a copy of the module, and writes rank<R>.dpir files into the
directory -o DIR, as partition -all does; -html draws a tab per rank.
The other instrument flags but -verify-each do not apply then.`)
	pipeline := fs.String("pipeline", "", "the pass pipeline, e.g. 'verify,dce,canonicalize-names' (see distpass passes)")
	out := fs.String("o", "", "write the module to `FILE` (default, or -: stdout); with $RANK: the directory for rank<R>.dpir")
	htmlOut := fs.String("html", "", "also write the pass explorer, an HTML page of the IR after every pass, to `FILE`")
	flags := addInstrumentFlags(fs)
	files, code, ok := parseFlagsAnywhere(env, fs, args)
	if !ok {
		return code
	}
	var m *ir.Module
	var pl *passes.Pipeline
	text := *pipeline
	name := "<stdin>" // the module's name on the -html page
	if text == "" && *flags.repro != "" {
		if len(files) > 0 {
			fmt.Fprintln(env.Stderr, "distpass run: a replay takes its module from the reproducer, not from FILE")
			return ExitUsage
		}
		data, err := os.ReadFile(*flags.repro)
		if err != nil {
			fmt.Fprintf(env.Stderr, "distpass run: %v\n", err)
			return ExitFail
		}
		pl, m, err = passes.ParseReproducer(env.passRegistry(), *flags.repro, data)
		if err == nil {
			err = passes.Verify(m)
		}
		if err != nil {
			printErr(env, *flags.repro, err)
			return ExitFail
		}
		flags.input, name = *flags.repro, *flags.repro
		*flags.repro = "" // a replay that fails must not overwrite what it replays
	} else {
		if text == "" {
			fmt.Fprintln(env.Stderr, "distpass run: -pipeline is required (see distpass passes)")
			return ExitUsage
		}
		if namesRank(text) {
			return runPerRank(env, fs, files, text, *out, *htmlOut, flags)
		}
		in, mod, code, ok := loadOne(env, "run", files)
		if !ok {
			return code
		}
		m, flags.input, name = mod, in.name, in.name
		// A pipeline that does not parse is bad input, as a module that
		// does not parse is: exit 1, with its position.
		var err error
		if pl, err = env.passRegistry().Parse(text); err != nil {
			fmt.Fprintf(env.Stderr, "distpass run: %v\n", err)
			return ExitFail
		}
	}
	if *htmlOut == "" {
		return runPipeline(env, pl, m, flags, *out)
	}
	// The page is written whether the run succeeds or fails.
	rec := &viz.Recorder{Name: name}
	flags.extra = append(flags.extra, rec)
	code = runPipeline(env, pl, m, flags, *out)
	if err := writeExplorer(env, *htmlOut, "distpass run "+name, []*viz.Trace{rec.Trace()}, htmlMaxNodes); err != nil {
		fmt.Fprintf(env.Stderr, "distpass run: %v\n", err)
		return ExitFail
	}
	return code
}

// runPipeline runs pl over m with the flags' instruments and writes the
// module to out, or stdout.
func runPipeline(env *Env, pl *passes.Pipeline, m *ir.Module, flags *instrumentFlags, out string) int {
	if err := (&passes.Manager{Instruments: flags.instruments(env)}).Run(context.Background(), pl, m); err != nil {
		printErr(env, flags.input, err)
		var pe *passes.PassError
		if errors.As(err, &pe) && pe.Panic != nil {
			fmt.Fprintf(env.Stderr, "%s", pe.Stack)
		}
		return ExitFail
	}
	if err := verifyResult(m); err != nil {
		printErr(env, flags.input, err)
		return ExitFail
	}
	if err := writeModule(env, out, m); err != nil {
		fmt.Fprintf(env.Stderr, "distpass: %v\n", err)
		return ExitFail
	}
	return ExitOK
}

// verifyResult checks m, a module a command is about to print or write,
// as every command checks what it reads (passes.Verify): distpass prints
// nothing its own verify refuses. A pipeline may end without verify, and
// a pass may build what no rule of its own refuses. The error has a line
// per violation, each saying that the result was not written.
func verifyResult(m *ir.Module) error {
	err := passes.Verify(m)
	if err == nil {
		return nil
	}
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		lines[i] = "the result does not verify, so it is not written: " + l
	}
	return errors.New(strings.Join(lines, "\n"))
}

// verifyRank is verifyResult of the program of a rank, pm, that
// partition -all is about to write: each line names the rank.
func verifyRank(pm *ir.Module) error {
	err := verifyResult(pm)
	if err == nil {
		return nil
	}
	prefix := "rank " + strconv.Itoa(pm.Main.Rank) + ": "
	return errors.New(prefix + strings.ReplaceAll(err.Error(), "\n", "\n"+prefix))
}

// perRankFlags are the flags of run that apply to a pipeline with $RANK;
// the other instruments' reports, dumps and reproducer would mix the
// ranks'.
var perRankFlags = []string{"pipeline", "o", "html", "verify-each"}

// runPerRank is run of a pipeline that names $RANK: once per rank, each
// rank's module written to dir/rank<R>.dpir, and with htmlOut the
// explorer with a tab per rank, written whether the runs fail or not.
func runPerRank(env *Env, fs *flag.FlagSet, files []string, text, dir, htmlOut string, flags *instrumentFlags) int {
	var set []string
	fs.Visit(func(f *flag.Flag) {
		if !slices.Contains(perRankFlags, f.Name) {
			set = append(set, "-"+f.Name)
		}
	})
	if len(set) > 0 {
		fmt.Fprintf(env.Stderr, "distpass run: %s: not with a pipeline that names %s (it runs once per rank); give the rank instead\n", strings.Join(set, ", "), rankVar)
		return ExitUsage
	}
	if isStdout(dir) {
		fmt.Fprintf(env.Stderr, "distpass run: a pipeline that names %s writes one file per rank: give -o DIR\n", rankVar)
		return ExitUsage
	}
	in, m, code, ok := loadOne(env, "run", files)
	if !ok {
		return code
	}
	runs, ok := parseRuns(env, "run", in.name, m, text)
	if !ok {
		return ExitFail
	}
	recs := make([]*viz.Recorder, len(runs))
	runAll(context.Background(), m, runs, func(i int) []passes.Instrument {
		var is []passes.Instrument
		if *flags.verifyEach {
			is = append(is, passes.VerifyEach{})
		}
		if htmlOut != "" {
			recs[i] = &viz.Recorder{Name: runs[i].name()}
			is = append(is, recs[i])
		}
		return is
	}, nil)
	par.Do(len(runs), 0, func(i int) {
		if r := runs[i]; r.err == nil {
			r.err = verifyResult(r.out)
		}
	})
	code = ExitOK
	if r := firstFailed(runs); r != nil {
		printErr(env, r.where(in.name), r.err)
		code = ExitFail
	} else if err := writeRanks(env, dir, runs); err != nil {
		fmt.Fprintf(env.Stderr, "distpass run: %v\n", err)
		code = ExitFail
	}
	if htmlOut != "" {
		traces := make([]*viz.Trace, len(recs))
		for i, rec := range recs {
			traces[i] = rec.Trace()
		}
		if err := writeExplorer(env, htmlOut, "distpass run "+in.name, traces, htmlMaxNodes); err != nil {
			fmt.Fprintf(env.Stderr, "distpass run: %v\n", err)
			return ExitFail
		}
	}
	return code
}

// writeRanks writes each run's module to dir/rank<R>.dpir, as partition
// -all names them, on every core.
func writeRanks(env *Env, dir string, runs []*rankRun) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	errs := make([]error, len(runs))
	par.Do(len(runs), 0, func(i int) {
		errs[i] = writeModule(env, filepath.Join(dir, "rank"+strconv.Itoa(runs[i].rank)+".dpir"), runs[i].out)
	})
	return errors.Join(errs...)
}
