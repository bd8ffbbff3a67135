package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/proof"
)

func runCheck(env *Env, args []string) int {
	fs := newFlagSet(env, "check", "[-static] [-steps N] [-tol T] [-parts DIR | -pipeline P] [FILE|-]",
		`Check partitions every rank of the module, runs the serial training step and
the SPMD step (all ranks at once, collectives included) from the same
values, and compares the loss, every parameter after the update, its grad,
and every forward activation, shard by shard. It prints a table of the
largest absolute and relative errors, then how many vars of each kind it
compared (and says so when no param or grad was), and exits 1 on a
mismatch, naming the first var and rank that diverged.

With -parts DIR it checks the per-rank programs in DIR (rank0.dpir,
rank1.dpir, ..., as partition -all -o DIR writes them, or made by hand or
by another partitioner; or the Paddle files partition -all -format
pdmodel writes: each rank's rank<N>.pdmodel, rank<N>.startup.pdmodel and
rank<N>.json, all three read) against FILE, the serial module, instead
of partitioning FILE itself: one program for every rank of FILE's meshes.

With -pipeline P, a pass pipeline that names $RANK, such as
'complete,partition{rank=$RANK}', it makes the per-rank programs by
running P once per rank of FILE's meshes, $RANK replaced by the rank,
each on a copy of FILE, and checks them against FILE as given: the
serial program (completion only adds annotations, and a reshard is
serially the identity). A pass that fails on a rank is reported as
"rank R: <the pass's error>".

When stderr is a terminal, a line there shows where the check is: the
partition, the serial step, the SPMD step and how many ranks ended it
(the last one named: they run at once, in any order). After the table
it says where the time went: the wall time of each phase, then the op
types the simulator spent the most time in, serial and every rank's
summed, with how many times each ran; the collectives, whose time is
mostly waiting for their peers, on a line of their own. Piped, stderr
shows neither, and stdout is the same either way.

With -f64 it first converts the module (and each part of -parts) to
f64 with the to-f64 pass, on its own copy, so that a deep f32 model is
compared at f64's tolerance: a lowering bug, not f32 rounding.

It proves the per-rank programs statically first (package proof): each
rank's ops followed with the blocks, owed reductions and factor of every
var, by the op rules and the group table; every ring's collectives in
one order on its members, giving the same serial var's blocks; sends
meeting receives. Two lines say its verdict and what it trusts. Refuted,
it prints what it refuted, a line each, and stops (exit 1) before
running anything; unproven, it names the first thing it could not follow
and runs the programs.

With -static it runs nothing: it proves the per-rank programs (FILE's
partition, or those of -parts or -pipeline), prints every finding, the
verdict and the trust base, and exits 0 (proven), 1 (refuted) or 3
(unproven: it met ops it does not follow yet).`)
	steps := rangeInt(fs, "steps", 1, 1, MaxCheckSteps, "training steps to run")
	tol := rangeFloat(fs, "tol", 0, 0, "relative tolerance, |got-want|/max(|want|,1) (0: 1e-5 for f64, 1e-4 for f32)")
	parts := fs.String("parts", "", "check the per-rank programs in `DIR` against FILE instead of FILE's own partition")
	pipeline := fs.String("pipeline", "", "make the per-rank programs with the pass pipeline `P`, which names $RANK, e.g. 'complete,partition{rank=$RANK}'")
	f64 := fs.Bool("f64", false, "run the module (and the parts) in f64: the to-f64 pass on check's copy first")
	static := fs.Bool("static", false, "prove the per-rank programs without running them (proven, refuted or unproven)")
	files, code, ok := parseFlagsAnywhere(env, fs, args)
	if !ok {
		return code
	}
	if *parts != "" && *pipeline != "" {
		fmt.Fprintln(env.Stderr, "distpass check: give at most one of -parts and -pipeline")
		return ExitUsage
	}
	if *pipeline != "" && !namesRank(*pipeline) {
		fmt.Fprintf(env.Stderr, "distpass check: -pipeline %q names no %s: it runs once per rank, e.g. 'complete,partition{rank=%s}'\n", *pipeline, rankVar, rankVar)
		return ExitUsage
	}
	in, m, code, ok := loadOne(env, "check", files)
	if !ok {
		return code
	}
	if *f64 {
		if _, err := passes.ToF64(m); err != nil {
			printErr(env, in.name, err)
			return ExitFail
		}
	}
	opts := check.Options{Steps: steps.v, Tol: tol.v}
	st := env.progress()
	watch := watchCheck(st, &opts, *parts, *pipeline)
	var (
		rep      *check.Report
		err      error
		refuted  bool // by the static proof
		stop     bool
		proofOut bytes.Buffer // the proof's lines, before the table
	)
	switch {
	case *parts != "":
		ranks, mods, code := readParts(env, *parts, m)
		if code != ExitOK {
			st.clear()
			return code
		}
		for i, pm := range mods {
			if !*f64 {
				break
			}
			if _, err := passes.ToF64(pm); err != nil {
				st.clear()
				printErr(env, fmt.Sprintf("%s: rank %d", *parts, ranks[i]), err)
				return ExitFail
			}
		}
		if *static {
			st.clear()
			return proveStatic(env, in.name, m, ranks, mods)
		}
		if refuted, code, stop = staticFirst(env, &proofOut, in.name, m, ranks, mods, opts, st); stop {
			return code
		}
		rep, err = check.RunParts(context.Background(), m, ranks, mods, opts)
	case *pipeline != "":
		ranks, mods, code := pipelineParts(env, in.name, m, *pipeline, st)
		if code != ExitOK {
			st.clear()
			return code
		}
		serial, code := pipelineSerial(env, in.name, m, *pipeline)
		if code != ExitOK {
			st.clear()
			return code
		}
		if *static {
			st.clear()
			return proveStatic(env, in.name, serial, ranks, mods)
		}
		if refuted, code, stop = staticFirst(env, &proofOut, in.name, serial, ranks, mods, opts, st); stop {
			return code
		}
		rep, err = check.RunParts(context.Background(), serial, ranks, mods, opts)
	case *static:
		// The programs partition -all writes, one at a time.
		cs, err := passes.PartitionClasses(context.Background(), m, nil, nil)
		if err != nil {
			printErr(env, in.name, err)
			return ExitFail
		}
		ranks := cs.Ranks()
		next, stop := writeAhead(cs, ranks)
		defer stop()
		res, err := proof.CheckEach(m, ranks, func(int) (*ir.Module, error) { r := <-next; return r.m, r.err })
		return printProof(env, in.name, res, err, len(ranks))
	default:
		// The programs partition -all writes, proven, then run.
		mods, werr := check.Written(context.Background(), m, nil, func(done, total int) {
			if opts.Progress != nil {
				opts.Progress(check.Event{Stage: "partition", Done: done, Total: total, Rank: -1})
			}
		})
		if werr != nil {
			st.clear()
			printErr(env, in.name, werr)
			return ExitFail
		}
		if refuted, code, stop = staticFirst(env, &proofOut, in.name, m, passes.Ranks(m), mods, opts, st); stop {
			return code
		}
		rep, err = check.RunParts(context.Background(), m, passes.Ranks(m), mods, opts)
	}
	st.clear()
	if err != nil {
		printErr(env, in.name, err)
		return ExitFail
	}
	env.Stdout.Write(proofOut.Bytes())
	if err := rep.Write(env.Stdout); err != nil {
		fmt.Fprintf(env.Stderr, "distpass check: %v\n", err)
		return ExitFail
	}
	watch.summary(env.Stderr)
	if err := rep.Err(); err != nil {
		printErr(env, in.name, err)
		return ExitFail
	}
	if refuted {
		return ExitFail
	}
	return ExitOK
}

// pipelineParts runs the pipeline text once per rank of m's meshes, each
// on a copy of m, and returns the ranks and their programs. A pass that
// fails, or a result that is not the rank's program, is printed, naming
// the rank: exit 1.
func pipelineParts(env *Env, file string, m *ir.Module, text string, st *status) ([]int, []*ir.Module, int) {
	if n := len(passes.Ranks(m)); n > check.MaxRanks {
		// Refused before the runs, as check.RunParts would after them.
		fmt.Fprintf(env.Stderr, "%s: the module's meshes have %d ranks: check simulates at most check.MaxRanks (%d)\n", file, n, check.MaxRanks)
		return nil, nil, ExitFail
	}
	runs, ok := parseRuns(env, "check", file, m, text)
	if !ok {
		return nil, nil, ExitFail
	}
	runAll(context.Background(), m, runs, nil, func(done, total int) {
		st.show("check: pipeline %d/%d", done, total)
	})
	if r := firstFailed(runs); r != nil {
		st.clear()
		printErr(env, r.where(file), r.err)
		return nil, nil, ExitFail
	}
	ranks := make([]int, len(runs))
	mods := make([]*ir.Module, len(runs))
	for i, r := range runs {
		// Checked against m, a module not partitioned for the rank would
		// be compared as if it were.
		if r.out.Main == nil || r.out.Main.Rank != r.rank {
			st.clear()
			got := "leaves no main program"
			if r.out.Main != nil && r.out.Main.Rank < 0 {
				got = "leaves main unpartitioned"
			} else if r.out.Main != nil {
				got = fmt.Sprintf("makes rank %d's main program", r.out.Main.Rank)
			}
			fmt.Fprintf(env.Stderr, "%s: %s: the pipeline %s: end it with partition{rank=%s}\n", file, r.name(), got, rankVar)
			return nil, nil, ExitFail
		}
		ranks[i], mods[i] = r.rank, r.out
	}
	return ranks, mods, ExitOK
}

// pipelineSerial is the serial module the -pipeline runs are held to: m
// after the passes before the pipeline's first partition step (complete,
// annotate, ...), which give it the dists that place each var on the
// ranks, run once; m itself when partition comes first. Those passes must
// not name the rank: each rank's run would then start from another serial
// module.
func pipelineSerial(env *Env, file string, m *ir.Module, text string) (*ir.Module, int) {
	pl, err := env.passRegistry().Parse(strings.ReplaceAll(text, rankVar, "0"))
	if err != nil {
		fmt.Fprintf(env.Stderr, "distpass check: %v\n", err)
		return nil, ExitFail
	}
	k := slices.IndexFunc(pl.Steps, func(s *passes.Step) bool { return s.Pass != nil && s.Pass.Name == "partition" })
	if k <= 0 {
		return m, ExitOK
	}
	if prefix := text[:pl.Steps[k].Col-1]; namesRank(prefix) {
		fmt.Fprintf(env.Stderr, "%s: the passes before partition in -pipeline %q name %s: check holds every rank to one serial module, which they must make alike for all\n", file, text, rankVar)
		return nil, ExitFail
	}
	serial := m.Clone()
	if err := (&passes.Manager{}).Run(context.Background(), &passes.Pipeline{Steps: pl.Steps[:k]}, serial); err != nil {
		printErr(env, file, err)
		return nil, ExitFail
	}
	return serial, ExitOK
}

type written struct {
	m   *ir.Module
	err error
}

// writeAhead writes the ranks' programs of cs (check.WrittenRank), in
// order, on a goroutine of its own a few ranks ahead of their reader, so
// that writing one rank's program and proving another's take the two
// cores. It stops at the first error, or when stop is called.
func writeAhead(cs *passes.Classes, ranks []int) (next <-chan written, stop func()) {
	out, done := make(chan written, 4), make(chan struct{})
	go func() {
		defer close(out)
		for _, r := range ranks {
			m, err := check.WrittenRank(cs, r)
			select {
			case out <- written{m, err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return out, func() { close(done) }
}

// ExitUnproven is check -static's exit status when the proof could not
// follow the programs to the end (neither proven nor refuted).
const ExitUnproven = 3

// proveStatic prints the static proof of mods, the programs of ranks,
// against serial: each finding, then the verdict and the trust base.
func proveStatic(env *Env, file string, serial *ir.Module, ranks []int, mods []*ir.Module) int {
	res, err := proof.Check(serial, ranks, mods)
	return printProof(env, file, res, err, len(ranks))
}

// printProof prints a proof's findings, verdict and trust base (or its
// error), and returns check -static's exit status.
func printProof(env *Env, file string, res *proof.Result, err error, ranks int) int {
	if err != nil {
		printErr(env, file, err)
		return ExitFail
	}
	for _, f := range res.Findings {
		fmt.Fprintln(env.Stdout, f)
	}
	return staticVerdict(env, env.Stdout, file, res, ranks)
}

// staticVerdict prints the proof's verdict line and its trust base, and
// returns its exit status.
func staticVerdict(env *Env, w io.Writer, file string, res *proof.Result, ranks int) int {
	code := ExitOK
	switch {
	case res.Refuted() != nil:
		fmt.Fprintf(w, "static proof: refuted (%d ranks)\n", ranks)
		code = ExitFail
	case !res.Proven():
		fmt.Fprintf(w, "static proof: unproven (%d ranks): %d things it does not follow yet\n", ranks, len(res.Findings))
		code = ExitUnproven
	default:
		fmt.Fprintf(w, "static proof: proven (%d ranks)\n", ranks)
	}
	fmt.Fprintf(w, "trust base: %s\n", res.TrustBase())
	if f := res.Refuted(); f != nil {
		printErr(env, file, fmt.Errorf("%s", f))
	}
	return code
}

// staticFirst proves the programs before the simulator runs them (the
// proof is cheap) and prints its verdict: refuted, the first refutations
// (check -static prints them all); unproven, the first thing it could
// not follow, into w, which the caller prints before the simulator's
// table (nothing on stdout when the run fails). The simulator runs after it either way: a refuted proof
// fails the check (failed) with the simulator's evidence beside it.
func staticFirst(env *Env, w io.Writer, file string, serial *ir.Module, ranks []int, mods []*ir.Module, opts check.Options, st *status) (failed bool, code int, stop bool) {
	if opts.Progress != nil {
		opts.Progress(check.Event{Stage: "static proof"})
	}
	res, err := proof.Check(serial, ranks, mods)
	st.clear()
	if err != nil {
		printErr(env, file, err)
		return true, ExitFail, true
	}
	const shown = 10
	n := 0
	for _, f := range res.Findings {
		if f.Unproven != (res.Refuted() == nil) {
			continue
		}
		if n++; n <= shown {
			fmt.Fprintln(w, f)
		}
	}
	if n > shown {
		fmt.Fprintf(w, "... and %d more (check -static prints them all)\n", n-shown)
	}
	return staticVerdict(env, w, file, res, len(ranks)) == ExitFail, ExitOK, false
}
