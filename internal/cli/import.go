package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/distpass/distpass/interop/paddle"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

const importArgs = "FILE [-o out.dpir] [-startup in.startup.pdmodel] [-sidecar in.json]"

func runImport(env *Env, args []string) int {
	fs := newFlagSet(env, "import", importArgs,
		`Import reads a Paddle program file and prints it as .dpir text, to stdout
or to -o FILE. The format is told by content: a ProgramDesc protobuf
(.pdmodel, __model__) starts with byte 0x0A; a Paddle 3 PIR JSON program
is an object whose base_code.magic is "pir" (its operands have no slot
names: they become in0, in1, …). A Python pickle (0x80), such
as the model_state_rank*.pdmodel that Paddle's save_distributed_checkpoint
writes, is a state dict, not a program, and is refused. -startup reads
the startup program's ProgramDesc into the same module (Paddle saves a
main and a startup program; 'distpass export -startup' writes them).
-sidecar reads the JSON that 'distpass export -sidecar' wrote beside the
files (meshes, dists and what else a ProgramDesc cannot hold).

Where a ProgramDesc holds what the IR's rules do not, and Paddle reads
it as the IR can, the import normalises it: a dim below -1 (a multiple
of an unknown batch) is read as -1, an empty slot its op's definition
lacks is dropped, an output declared with no dims (an inference
program's batch_norm SavedMean) takes the shape its op infers; nothing normalised changes what the
program computes, and a program exported back is then not the file's
bytes but one Paddle loads. -v lists each normalisation on stderr,
then how many there were.`)
	verbose := fs.Bool("v", false, "list the normalisations the import made, on stderr")
	out := fs.String("o", "", "write the module to `FILE` (default, or -: stdout)")
	startup := fs.String("startup", "", "read the startup program from the ProgramDesc `FILE`")
	side := fs.String("sidecar", "", "read the sidecar `FILE` written beside the program")
	files, code, ok := parseFlagsAnywhere(env, fs, args)
	if !ok {
		return code
	}
	if len(files) != 1 {
		fmt.Fprintln(env.Stderr, "distpass import: give one FILE")
		return ExitUsage
	}
	ins, err := readInputs(env, files)
	if err != nil {
		fmt.Fprintf(env.Stderr, "distpass import: %v\n", err)
		return ExitFail
	}
	in := ins[0]
	var m *ir.Module
	var norms []paddle.Normalisation
	switch paddle.Sniff(in.data) {
	case paddle.PIR:
		if *side != "" || *startup != "" {
			fmt.Fprintln(env.Stderr, "distpass import: -sidecar and -startup are for ProgramDesc files; a PIR program carries its own dist attrs")
			return ExitUsage
		}
		m, err = paddle.ImportPIR(in.name, in.data)
	case paddle.ProgramDesc:
		f := &paddle.Files{Main: in.data, SidecarName: *side}
		for _, r := range []struct {
			path string
			data *[]byte
		}{{*startup, &f.Startup}, {*side, &f.Sidecar}} {
			if r.path == "" {
				continue
			}
			if *r.data, err = os.ReadFile(r.path); err != nil {
				fmt.Fprintf(env.Stderr, "distpass import: %v\n", err)
				return ExitFail
			}
		}
		if f.Startup != nil && paddle.Sniff(f.Startup) == paddle.Pickle {
			err = errors.New(pickleError(*startup))
			break
		}
		m, err = paddle.ImportFiles(in.name, *startup, f)
		norms = f.Normalised
	case paddle.Pickle:
		err = errors.New(pickleError(in.name))
	default:
		// Broken JSON, a PIR program cut short say: where it breaks.
		if isJSONObject(in.data) {
			err = ir.CheckJSONSyntax(in.name, in.data)
		}
		// Newlines alone are a ProgramDesc cut short after its first
		// bytes (0x0A is its first field's tag) more than they are text:
		// the decoder says where it ends.
		if err == nil && len(in.data) > 0 && in.data[0] == 0x0A && len(bytes.TrimSpace(in.data)) == 0 {
			_, err = paddle.Import(in.name, in.data)
		}
		if err == nil && len(in.data) > 0 && in.data[0] == 0x0A {
			err = fmt.Errorf("%s: not a Paddle program: text that starts with a newline, where a ProgramDesc is binary protobuf (byte 0x0A, then its blocks); a PIR JSON program is an object with base_code.magic \"pir\"", in.name)
		}
		if err == nil {
			err = fmt.Errorf("%s: not a Paddle program: a ProgramDesc starts with byte 0x0A, a PIR JSON program is an object with base_code.magic \"pir\"", in.name)
		}
	}
	// What was decoded must pass the verifier, as every module a
	// command reads must.
	if err == nil {
		err = passes.Verify(m)
	}
	if err != nil {
		printErr(env, in.name, err)
		return ExitFail
	}
	if *verbose {
		for _, n := range norms {
			fmt.Fprintf(env.Stderr, "distpass import: normalised %s\n", n)
		}
		fmt.Fprintf(env.Stderr, "distpass import: %d normalisation(s)\n", len(norms))
	}
	return writeImported(env, m, *out)
}

// writeImported prints an imported module to out, or stdout.
func writeImported(env *Env, m *ir.Module, out string) int {
	if err := writeModule(env, out, m); err != nil {
		fmt.Fprintf(env.Stderr, "distpass import: %v\n", err)
		return ExitFail
	}
	return ExitOK
}

// pickleError says what a pickle given for a program is.
func pickleError(name string) string {
	return name + ": a Python pickle (a pickled state dict, such as Paddle's .pdparams or the model_state_rank*.pdmodel of save_distributed_checkpoint), not a program"
}
