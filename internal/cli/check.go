package cli

import (
	"context"
	"fmt"

	"github.com/distpass/distpass/check"
)

func runCheck(env *Env, args []string) int {
	fs := newFlagSet(env, "check", "[-steps N] [-tol T] [FILE|-]",
		`Check partitions every rank of the module, runs the serial training step and
the SPMD step (all ranks at once, collectives included) from the same
values, and compares the loss, every parameter after the update, its grad,
and every forward activation, shard by shard. It prints a table of the
largest absolute and relative errors and exits 1 on a mismatch, naming the
first var and rank that diverged.`)
	steps := rangeInt(fs, "steps", 1, 1, MaxCheckSteps, "training steps to run")
	tol := rangeFloat(fs, "tol", 0, 0, "relative tolerance, |got-want|/max(|want|,1) (0: 1e-5 for f64, 1e-4 for f32)")
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
	rep, err := check.Run(context.Background(), m, opts)
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
