package cli

import (
	"context"
	"fmt"

	"github.com/distpass/distpass/check"
)

func runCheck(env *Env, args []string) int {
	fs := newFlagSet(env, "check", "[-steps N] [-tol T] [-parts DIR] [FILE|-]",
		`Check partitions every rank of the module, runs the serial training step and
the SPMD step (all ranks at once, collectives included) from the same
values, and compares the loss, every parameter after the update, its grad,
and every forward activation, shard by shard. It prints a table of the
largest absolute and relative errors, then how many vars of each kind it
compared (and says so when no param or grad was), and exits 1 on a
mismatch, naming the first var and rank that diverged.

With -parts DIR it checks the per-rank programs in DIR (rank0.dpir,
rank1.dpir, ..., as partition -all -o DIR writes them, or made by hand or
by another partitioner) against FILE, the serial module, instead of
partitioning FILE itself: one program for every rank of FILE's meshes.`)
	steps := rangeInt(fs, "steps", 1, 1, MaxCheckSteps, "training steps to run")
	tol := rangeFloat(fs, "tol", 0, 0, "relative tolerance, |got-want|/max(|want|,1) (0: 1e-5 for f64, 1e-4 for f32)")
	parts := fs.String("parts", "", "check the per-rank programs in `DIR` against FILE instead of FILE's own partition")
	files, code, ok := parseFlagsAnywhere(env, fs, args)
	if !ok {
		return code
	}
	in, m, code, ok := loadOne(env, "check", files)
	if !ok {
		return code
	}
	opts := check.Options{Steps: steps.v, Tol: tol.v}
	st := env.progress()
	if st != nil {
		opts.Progress = func(stage string, done, total int) {
			st.show("check: %s %d/%d", stage, done, total)
		}
	}
	var (
		rep *check.Report
		err error
	)
	if *parts != "" {
		ranks, mods, code := readParts(env, *parts, m)
		if code != ExitOK {
			st.clear()
			return code
		}
		rep, err = check.RunParts(context.Background(), m, ranks, mods, opts)
	} else {
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
	if err := rep.Err(); err != nil {
		printErr(env, in.name, err)
		return ExitFail
	}
	return ExitOK
}
