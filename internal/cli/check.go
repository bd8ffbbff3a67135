package cli

import (
	"context"
	"fmt"
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

With -static it runs nothing: it proves the per-rank programs (FILE's
partition, or those of -parts or -pipeline) by reading them (package
proof): each rank's ops followed with the placement, owed reductions and
factor of every var, by the op rules and the group table, and every
group's collectives in one order on its members. It prints what it
refuted or could not follow, a line each, then its verdict: proven (exit
0), refuted (exit 1), or unproven (exit 3: it met ops it does not follow
yet; check without -static runs them).`)
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
		rep *check.Report
		err error
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
		rep, err = check.RunParts(context.Background(), serial, ranks, mods, opts)
	case *static:
		st.clear()
		mods, err := passes.PartitionAll(context.Background(), m, nil)
		if err != nil {
			printErr(env, in.name, err)
			return ExitFail
		}
		return proveStatic(env, in.name, m, passes.Ranks(m), mods)
	default:
		rep, err = check.Run(context.Background(), m, opts)
	}
	st.clear()
	if err != nil {
		printErr(env, in.name, err)
		return ExitFail
	}
	if err := rep.Write(env.Stdout); err != nil {
		fmt.Fprintf(env.Stderr, "distpass check: %v\n", err)
		return ExitFail
	}
	watch.summary(env.Stderr)
	if err := rep.Err(); err != nil {
		printErr(env, in.name, err)
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

// ExitUnproven is check -static's exit status when the proof could not
// follow the programs to the end (neither proven nor refuted).
const ExitUnproven = 3

// proveStatic prints the static proof of mods, the programs of ranks,
// against serial: each finding, then the verdict.
func proveStatic(env *Env, file string, serial *ir.Module, ranks []int, mods []*ir.Module) int {
	res, err := proof.Check(serial, ranks, mods)
	if err != nil {
		printErr(env, file, err)
		return ExitFail
	}
	for _, f := range res.Findings {
		fmt.Fprintln(env.Stdout, f)
	}
	switch {
	case res.Refuted() != nil:
		fmt.Fprintf(env.Stdout, "static proof: refuted (%d ranks)\n", len(ranks))
		printErr(env, file, fmt.Errorf("%s", res.Refuted()))
		return ExitFail
	case !res.Proven():
		fmt.Fprintf(env.Stdout, "static proof: unproven (%d ranks): it does not follow every op yet\n", len(ranks))
		return ExitUnproven
	}
	fmt.Fprintf(env.Stdout, "static proof: proven (%d ranks)\n", len(ranks))
	return ExitOK
}
