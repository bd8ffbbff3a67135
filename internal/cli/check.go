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
	steps := fs.Int("steps", 1, "training steps to run")
	tol := fs.Float64("tol", 0, "relative tolerance, |got-want|/max(|want|,1) (0: 1e-5 for f64, 1e-4 for f32)")
	if code, ok := parseFlags(env, fs, args); !ok {
		return code
	}
	if fs.NArg() > 1 {
		fmt.Fprintln(env.Stderr, "distpass check: one FILE at most")
		return ExitUsage
	}
	ins, err := readInputs(env, fs.Args())
	if err != nil {
		fmt.Fprintf(env.Stderr, "distpass check: %v\n", err)
		return ExitFail
	}
	m, err := parse(ins[0])
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return ExitFail
	}
	opts := check.Options{Steps: *steps, Tol: *tol}
	st := env.progress()
	if st != nil {
		opts.Progress = func(stage string, done, total int) {
			st.show("check: %s %d/%d", stage, done, total)
		}
	}
	rep, err := check.Run(context.Background(), m, opts)
	st.clear()
	if err != nil {
		printErr(env, ins[0].name, err)
		return ExitFail
	}
	if err := rep.Write(env.Stdout); err != nil {
		fmt.Fprintf(env.Stderr, "distpass check: %v\n", err)
		return ExitFail
	}
	if err := rep.Err(); err != nil {
		printErr(env, ins[0].name, err)
		return ExitFail
	}
	return ExitOK
}
