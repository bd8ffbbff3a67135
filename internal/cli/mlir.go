package cli

import (
	"fmt"

	"github.com/distpass/distpass/interop/mlir"
)

func runMLIR(env *Env, args []string) int {
	fs := newFlagSet(env, "mlir", "[FILE|-]",
		`Mlir prints the MLIR twin of a module's main program: MLIR text in
generic form that mlir-opt --allow-unregistered-dialect reads, one
"dist.<op type>" op a line, values in SSA form, sub-blocks as regions
(see the doc of package interop/mlir). No FILE, or -, reads stdin.`)
	if code, ok := parseFlags(env, fs, args); !ok {
		return code
	}
	if fs.NArg() > 1 {
		fmt.Fprintln(env.Stderr, "distpass mlir: one FILE at most")
		return ExitUsage
	}
	ins, err := readInputs(env, fs.Args())
	if err != nil {
		fmt.Fprintf(env.Stderr, "distpass mlir: %v\n", err)
		return ExitFail
	}
	m, err := parse(ins[0])
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return ExitFail
	}
	if err := mlir.Write(env.Stdout, m); err != nil { // it buffers
		fmt.Fprintf(env.Stderr, "distpass mlir: %v\n", err)
		return ExitFail
	}
	return ExitOK
}
