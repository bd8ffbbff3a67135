package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/registry"
)

func runPartition(env *Env, args []string) int {
	fs := newFlagSet(env, "partition", "-rank R | -all [-o DIR] [instrument flags] [FILE|-]",
		`Partition produces the SPMD program of one rank (-rank R, to stdout or
to -o FILE), or of every rank of the module's meshes (-all, concurrently,
as rank<R>.dpir files in the directory -o DIR). The input is not changed.
With -rank, the instrument flags of 'distpass run' apply to the pipeline
partition{rank=R}.`)
	rank := fs.Int("rank", -1, "the rank to produce")
	all := fs.Bool("all", false, "produce every rank")
	out := fs.String("o", "", "with -rank: write to `FILE`; with -all: the directory for rank<R>.dpir")
	flags := addInstrumentFlags(fs)
	if code, ok := parseFlags(env, fs, args); !ok {
		return code
	}
	if (*rank >= 0) == *all {
		fmt.Fprintln(env.Stderr, "distpass partition: give exactly one of -rank R and -all")
		return ExitUsage
	}
	if *all && *out == "" {
		fmt.Fprintln(env.Stderr, "distpass partition: -all writes one file per rank: give -o DIR")
		return ExitUsage
	}
	if fs.NArg() > 1 {
		fmt.Fprintln(env.Stderr, "distpass partition: one FILE at most")
		return ExitUsage
	}
	ins, err := readInputs(env, fs.Args())
	if err != nil {
		fmt.Fprintf(env.Stderr, "distpass partition: %v\n", err)
		return ExitFail
	}
	m, err := parse(ins[0])
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return ExitFail
	}
	flags.input = ins[0].name
	if *all {
		st := env.progress()
		mods, err := passes.PartitionAllProgress(context.Background(), m, registry.DefaultRegistry(), func(done, total int) {
			st.show("partition: %d/%d ranks", done, total)
		})
		st.clear()
		if err != nil {
			printErr(env, ins[0].name, err)
			return ExitFail
		}
		if err := os.MkdirAll(*out, 0o755); err != nil {
			fmt.Fprintf(env.Stderr, "distpass partition: %v\n", err)
			return ExitFail
		}
		for _, pm := range mods {
			path := filepath.Join(*out, "rank"+strconv.Itoa(pm.Main.Rank)+".dpir")
			if err := writeModule(path, pm); err != nil {
				fmt.Fprintf(env.Stderr, "distpass partition: %v\n", err)
				return ExitFail
			}
		}
		return ExitOK
	}
	pl, err := passes.DefaultRegistry().Parse("partition{rank=" + strconv.Itoa(*rank) + "}")
	if err != nil {
		fmt.Fprintf(env.Stderr, "distpass partition: %v\n", err)
		return ExitUsage
	}
	return runPipeline(env, pl, m, flags, *out)
}

func writeModule(path string, m *ir.Module) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = ir.Fprint(f, m)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
