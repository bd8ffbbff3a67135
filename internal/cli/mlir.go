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
	files, code, ok := parseFlagsAnywhere(env, fs, args)
	if !ok {
		return code
	}
	_, m, code, ok := loadOne(env, "mlir", files)
	if !ok {
		return code
	}
	if err := mlir.Write(env.Stdout, m); err != nil { // it buffers
		fmt.Fprintf(env.Stderr, "distpass mlir: %v\n", err)
		return ExitFail
	}
	return ExitOK
}
