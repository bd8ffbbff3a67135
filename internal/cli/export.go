package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/distpass/distpass/interop/paddle"
)

const exportArgs = "FILE -o out.pdmodel [-sidecar out.json | -drop]"

func runExport(env *Env, args []string) int {
	fs := newFlagSet(env, "export", exportArgs,
		`Export writes the main program of a module (.dpir text, or a Paddle file)
as a Paddle ProgramDesc protobuf to -o FILE. A module imported from Paddle
exports to the bytes it came from. What the ProgramDesc cannot hold
(meshes, dists, fwd, groups, params-grads, the startup program, ...) is
an error naming the first such thing, unless -sidecar writes it to a JSON
file beside the program ('distpass import -sidecar' reads the pair back)
or -drop leaves it out.`)
	out := fs.String("o", "", "write the ProgramDesc to `FILE` (- is stdout)")
	side := fs.String("sidecar", "", "write what the ProgramDesc cannot hold to `FILE` (JSON)")
	drop := fs.Bool("drop", false, "leave out what the ProgramDesc cannot hold")
	files, code, ok := parseFlagsAnywhere(env, fs, args)
	if !ok {
		return code
	}
	if *out == "" {
		fmt.Fprintln(env.Stderr, "distpass export: give -o FILE")
		return ExitUsage
	}
	if *side != "" && *drop {
		fmt.Fprintln(env.Stderr, "distpass export: -sidecar and -drop do not go together")
		return ExitUsage
	}
	in, m, code, ok := loadOne(env, "export", files)
	if !ok {
		return code
	}
	var pb, sc []byte
	var err error
	if *side != "" {
		pb, sc, err = paddle.ExportWithSidecar(m)
	} else {
		pb, err = paddle.ExportWith(m, paddle.ExportOptions{Drop: *drop})
	}
	var unrep *paddle.UnrepresentableError
	if errors.As(err, &unrep) {
		fmt.Fprintf(env.Stderr, "%s: %s: the ProgramDesc cannot hold it (write it to a sidecar with -sidecar FILE, or leave it out with -drop)\n", in.name, unrep.What)
		return ExitFail
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", in.name, err)
		return ExitFail
	}
	if isStdout(*out) {
		_, err = env.Stdout.Write(pb)
	} else {
		err = os.WriteFile(*out, pb, 0o644)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "distpass export: %v\n", err)
		return ExitFail
	}
	if sc != nil {
		if err := os.WriteFile(*side, sc, 0o644); err != nil {
			fmt.Fprintf(env.Stderr, "distpass export: %v\n", err)
			return ExitFail
		}
	}
	return ExitOK
}
