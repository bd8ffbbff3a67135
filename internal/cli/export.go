package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/distpass/distpass/interop/paddle"
)

const exportArgs = "FILE -o out.pdmodel [-startup out.startup.pdmodel] [-sidecar out.json | -drop]"

func runExport(env *Env, args []string) int {
	fs := newFlagSet(env, "export", exportArgs,
		`Export writes the main program of a module (.dpir text, or a Paddle file)
as a Paddle ProgramDesc protobuf to -o FILE. A module imported from Paddle
exports to the bytes it came from. -startup FILE writes the startup
program as a ProgramDesc of its own, as Paddle saves a main and a startup
program; a module without a startup program is refused there (no empty
program is made up). What the ProgramDescs cannot hold (meshes, dists,
fwd, groups, params-grads, the startup program without -startup, ...) is
an error naming the first such thing, unless -sidecar writes it to a JSON
file beside the program ('distpass import -sidecar' reads the files back)
or -drop leaves it out.`)
	out := fs.String("o", "", "write the ProgramDesc to `FILE` (- is stdout)")
	startup := fs.String("startup", "", "write the startup program's ProgramDesc to `FILE`")
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
	if *startup == "-" || *side == "-" {
		fmt.Fprintln(env.Stderr, "distpass export: -startup and -sidecar write files: give a FILE, not -")
		return ExitUsage
	}
	in, m, code, ok := loadOne(env, "export", files)
	if !ok {
		return code
	}
	if *startup != "" && m.Startup == nil {
		fmt.Fprintf(env.Stderr, "%s: the module has no startup program to write to -startup %s\n", in.name, *startup)
		return ExitFail
	}
	f, err := paddle.ExportFiles(m, paddle.ExportOptions{Drop: *drop, Sidecar: *side != "", Startup: *startup != ""})
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
		_, err = env.Stdout.Write(f.Main)
	} else {
		err = os.WriteFile(*out, f.Main, 0o644)
	}
	for _, w := range []struct {
		path string
		data []byte
	}{{*startup, f.Startup}, {*side, f.Sidecar}} {
		if err == nil && w.data != nil {
			err = os.WriteFile(w.path, w.data, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "distpass export: %v\n", err)
		return ExitFail
	}
	return ExitOK
}
