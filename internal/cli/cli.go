package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/distpass/distpass/custom"
	"github.com/distpass/distpass/interop/paddle"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/passes"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitFail  = 1
	ExitUsage = 2
)

// Env is what a command sees of the world.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Terminal reports whether w is a terminal: long runs show progress
	// on stderr only then. Nil means: an *os.File that is a character
	// device.
	Terminal func(w io.Writer) bool
	// PrepareHeap, when set, is told how many bytes of heap a command
	// expects to build, before it builds them; the binary readies that
	// much memory for huge pages (gctune.PrepareHeap, when
	// DISTPASS_HUGEPAGES=1 asks for it) and reports whether it did.
	PrepareHeap func(bytes uint64) bool
	// Passes is what the pipelines of run, html and check -pipeline
	// are made of, and what passes lists (nil: passes.DefaultRegistry()):
	// a test can add a pass of its own.
	Passes *passes.Registry
}

// passRegistry returns env.Passes, or the default.
func (env *Env) passRegistry() *passes.Registry {
	if env.Passes != nil {
		return env.Passes
	}
	return passes.DefaultRegistry()
}

// heapPerInputByte is about the heap a command builds per byte of .dpir
// text it reads: the module (about 3 bytes per byte of text) and what the
// passes make of it.
const heapPerInputByte = 8

// expectHeap passes n to PrepareHeap when there is one. Whether it
// readied huge pages was for bench's report, which left the CLI.
func (env *Env) expectHeap(n uint64) {
	if env.PrepareHeap != nil {
		env.PrepareHeap(n)
	}
}

// progress returns a one-line status on stderr when stderr is a
// terminal, and nil otherwise, so that logs and pipes stay clean; a nil
// status does nothing.
func (env *Env) progress() *status {
	isTerm := env.Terminal
	if isTerm == nil {
		isTerm = func(w io.Writer) bool {
			f, ok := w.(*os.File)
			if !ok {
				return false
			}
			fi, err := f.Stat()
			return err == nil && fi.Mode()&os.ModeCharDevice != 0
		}
	}
	if !isTerm(env.Stderr) {
		return nil
	}
	return &status{w: env.Stderr}
}

// status is a line of progress that rewrites itself.
type status struct{ w io.Writer }

func (s *status) show(format string, args ...any) {
	if s != nil {
		fmt.Fprintf(s.w, "\r\033[K"+format, args...)
	}
}

func (s *status) clear() {
	if s != nil {
		fmt.Fprint(s.w, "\r\033[K")
	}
}

type command struct {
	name, args, short string
	run               func(env *Env, args []string) int
}

func commands() []command {
	return []command{
		{"fmt", "[-w | -json] [FILE|-]...", "print .dpir files canonically", runFmt},
		{"verify", "[FILE|-]...", "parse and verify .dpir files; list every violation", runVerify},
		{"passes", "", "list the passes, their options and order rules", runPasses},
		{"run", "-pipeline P [flags] [FILE|-]", "run a pass pipeline over a module, with instruments", runRun},
		{"dot", "[-block N] [-program NAME] [FILE|-]", "draw a program as Graphviz DOT", runDot},
		{"html", "-pipeline P [-o FILE] [FILE|-]", "run a pipeline and write an HTML page of the IR after every pass", runHTML},
		{"complete", completeArgs, "infer every dist and impl from a few annotations (sharding completion)", runComplete},
		{"partition", "-rank R | -all [-o DIR] [FILE|-]", "produce the SPMD program of one rank, or of every rank", runPartition},
		{"check", "[-steps N] [-tol T] [FILE|-]", "run serial and partitioned training steps and compare them", runCheck},
		{"explain", explainArgs, "list each rank's collectives: why each is there and the bytes it moves", runExplain},
		{"example", exampleArgs, "print an annotated example training module", runExample},
		{"import", importArgs, "read a Paddle program file (ProgramDesc or PIR JSON) as .dpir text", runImport},
		{"export", exportArgs, "write a module's main program as a Paddle ProgramDesc", runExport},
		{"version", "", "print distpass's version", runVersion},
		{"ops", opsArgs, "list the op types the op table defines: slots, attrs, shapes, grads", runOps},
		{"mlir", "[FILE|-]", "print the MLIR twin of a module's main program (generic form)", runMLIR},
	}
}

// Main runs distpass with args (without the program name) and returns the
// exit code. Before the command, -cpuprofile FILE and -memprofile FILE
// write Go's CPU profile of the whole command and a heap profile at its
// end, for `go tool pprof`; -defs FILE adds the op types of a definition
// file (package custom) for the command.
func Main(args []string, env *Env) int {
	for len(args) >= 2 && (args[0] == "-cpuprofile" || args[0] == "-memprofile" || args[0] == "-defs") {
		flag, path := args[0], args[1]
		args = args[2:]
		if flag == "-defs" {
			if err := loadDefs(path); err != nil {
				fmt.Fprintf(env.Stderr, "distpass: -defs: %v\n", err)
				return ExitUsage
			}
			continue
		}
		if flag == "-memprofile" {
			defer func() {
				if err := writeHeapProfile(path); err != nil {
					fmt.Fprintf(env.Stderr, "distpass: -memprofile: %v\n", err)
				}
			}()
			continue
		}
		stop, err := startCPUProfile(path)
		if err != nil {
			fmt.Fprintf(env.Stderr, "distpass: -cpuprofile: %v\n", err)
			return ExitUsage
		}
		defer stop()
	}
	if len(args) == 0 {
		usage(env.Stderr)
		return ExitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			for _, c := range commands() {
				if c.name == args[1] {
					c.run(env, []string{"-h"})
					return ExitOK
				}
			}
			fmt.Fprintf(env.Stderr, "distpass help: unknown command %q\n", args[1])
			return ExitUsage
		}
		usage(env.Stdout)
		return ExitOK
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(env, args[1:])
		}
	}
	fmt.Fprintf(env.Stderr, "distpass: unknown command %q\n", name)
	usage(env.Stderr)
	return ExitUsage
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "distpass partitions annotated serial ML programs into per-rank SPMD programs.\n\nUsage:\n\n  distpass <command> [arguments]\n\nCommands:\n\n")
	cs := commands()
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	for _, c := range cs {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.short)
	}
	fmt.Fprintf(w, "\nRun 'distpass help <command>' for a command's flags. Before the command,\n-defs FILE adds the op types of a definition file (repeatable), and\n-cpuprofile FILE and -memprofile FILE write Go profiles of the run.\n")
}

// newFlagSet returns a FlagSet whose usage names the command; -h prints it
// to stdout and is not an error.
func newFlagSet(env *Env, c string, args string, doc string) *flag.FlagSet {
	fs := flag.NewFlagSet(c, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: distpass %s %s\n\n%s\n", c, args, doc)
		var hasFlags bool
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintf(fs.Output(), "\nFlags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseFlags parses args; it returns an exit code and false when the
// command should stop (-h or a bad flag).
func parseFlags(env *Env, fs *flag.FlagSet, args []string) (int, bool) {
	// Parse prints the usage itself on -h and on a bad flag; it is
	// printed here instead, once, to stdout for -h and stderr otherwise.
	usage := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = usage
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(env.Stdout)
		fs.Usage()
		return ExitOK, false
	}
	if err != nil {
		fs.Usage()
		return ExitUsage, false
	}
	return 0, true
}

// parseFlagsAnywhere is parseFlags for commands whose flags may also
// follow their FILE arguments ("distpass import model.pdmodel -o m.dpir"):
// it returns the arguments that are not flags, in order.
func parseFlagsAnywhere(env *Env, fs *flag.FlagSet, args []string) ([]string, int, bool) {
	var pos []string
	for {
		if code, ok := parseFlags(env, fs, args); !ok {
			return nil, code, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, 0, true
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// readFile maps the file when it can, and reads it otherwise. The bytes
// must not be modified: parse keeps names that point into them.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if data, ok := mapFile(f); ok {
		return data, nil
	}
	return io.ReadAll(f)
}

// parse reads an input as a module, told by content whatever the file
// is called (paddle.Sniff): a Paddle ProgramDesc or PIR JSON program, the
// IR's own JSON (ir.EncodeJSON's: any other JSON object), or .dpir text.
// .dpir text is parsed without copying: the CLI owns the bytes and never
// changes them, so the module's names may point into them.
func parse(in input) (*ir.Module, error) {
	switch paddle.Sniff(in.data) {
	case paddle.PIR:
		return paddle.ImportPIR(in.name, in.data)
	case paddle.ProgramDesc:
		return paddle.Import(in.name, in.data)
	case paddle.Pickle:
		return nil, errors.New(pickleError(in.name))
	}
	if isJSONObject(in.data) {
		return ir.ParseJSON(in.name, in.data)
	}
	return ir.ParseString(in.name, unsafe.String(unsafe.SliceData(in.data), len(in.data)))
}

// parseVerified is parse, then passes.Verify (the IR's rules and the op
// table's): every command but fmt works on verified modules only, so
// that no pass, lowering or simulation ever sees a module that breaks
// them. The error lists every
// violation, one a line, each naming the file.
func parseVerified(in input) (*ir.Module, error) {
	m, err := parse(in)
	if err != nil {
		return nil, err
	}
	if err := passes.Verify(m); err != nil {
		return nil, err
	}
	return m, nil
}

// isJSONObject reports whether data starts, after white space, with "{":
// a JSON object, which .dpir text (a keyword or a comment first) is not.
func isJSONObject(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// loadOne reads the one FILE argument of cmd (stdin when there is none,
// or "-"), parses and verifies it. On failure it has printed why and
// returns ok false with the exit code.
func loadOne(env *Env, cmd string, files []string) (in input, m *ir.Module, code int, ok bool) {
	if len(files) > 1 {
		fmt.Fprintf(env.Stderr, "distpass %s: one FILE at most\n", cmd)
		return in, nil, ExitUsage, false
	}
	ins, err := readInputs(env, files)
	if err != nil {
		fmt.Fprintf(env.Stderr, "distpass %s: %v\n", cmd, err)
		return in, nil, ExitFail, false
	}
	in = ins[0]
	if m, err = parseVerified(in); err != nil {
		printErr(env, in.name, err)
		return in, nil, ExitFail, false
	}
	return in, m, ExitOK, true
}

// isStdout reports whether an -o value means stdout: none, or "-", for
// every command.
func isStdout(path string) bool { return path == "" || path == "-" }

// input is one FILE argument, read whole.
type input struct {
	name string // as it appears in messages
	path string // "" for stdin
	data []byte
}

// readInputs reads each FILE argument; "-" (or no argument at all) is stdin.
func readInputs(env *Env, args []string) ([]input, error) {
	if len(args) == 0 {
		args = []string{"-"}
	}
	var ins []input
	stdinUsed := false
	for _, a := range args {
		if a == "-" {
			if stdinUsed {
				return nil, errors.New("stdin (-) given twice")
			}
			stdinUsed = true
			data, err := io.ReadAll(env.Stdin)
			if err != nil {
				return nil, fmt.Errorf("reading stdin: %w", err)
			}
			ins = append(ins, input{name: "<stdin>", data: data})
			continue
		}
		data, err := readFile(a)
		if err != nil {
			return nil, err
		}
		ins = append(ins, input{name: a, path: a, data: data})
	}
	var total uint64
	for _, in := range ins {
		total += uint64(len(in.data))
	}
	env.expectHeap(heapPerInputByte * total)
	return ins, nil
}

// eachModule reads and parses every FILE argument and calls do on each
// module that parses; a file that does not parse is reported and skipped.
// The result is ExitFail if any file failed or do did.
func eachModule(env *Env, cmd string, args []string, do func(in input, m *ir.Module) int) int {
	ins, err := readInputs(env, args)
	if err != nil {
		fmt.Fprintf(env.Stderr, "distpass %s: %v\n", cmd, err)
		return ExitFail
	}
	code := ExitOK
	for _, in := range ins {
		m, err := parse(in)
		if err != nil {
			fmt.Fprintln(env.Stderr, err)
			code = ExitFail
			continue
		}
		if c := do(in, m); c != ExitOK {
			code = c
		}
	}
	return code
}

func runFmt(env *Env, args []string) int {
	fs := newFlagSet(env, "fmt", "[-w | -json] [FILE|-]...",
		"Fmt parses each file and prints it in canonical form to stdout; with -w it\nrewrites the files in place instead, which must be .dpir text. No FILE, or -,\nreads stdin. With -json it prints the module as the IR's JSON (see\nir.EncodeJSON), which every command reads as it reads .dpir text. Fmt\nchecks the syntax only, as gofmt does: distpass verify checks the rules.")
	write := fs.Bool("w", false, "write the result to each FILE instead of stdout")
	asJSON := fs.Bool("json", false, "print the IR's JSON form instead of text")
	files, code, ok := parseFlagsAnywhere(env, fs, args)
	if !ok {
		return code
	}
	if *write && *asJSON {
		fmt.Fprintln(env.Stderr, "distpass fmt: -w rewrites .dpir text: it does not go with -json")
		return ExitUsage
	}
	return eachModule(env, "fmt", files, func(in input, m *ir.Module) int {
		var err error
		switch {
		case *asJSON:
			var data []byte
			if data, err = ir.EncodeJSON(m); err == nil {
				_, err = env.Stdout.Write(data)
			}
		case !*write || in.path == "":
			err = ir.Fprint(env.Stdout, m)
		case notText(in.data) != "":
			// Rewriting it would replace a program in another format
			// with its .dpir text under the same name.
			fmt.Fprintf(env.Stderr, "distpass fmt: -w rewrites .dpir text, and %s is %s: write the text elsewhere (distpass fmt %s > FILE.dpir)\n", in.name, notText(in.data), in.name)
			return ExitFail
		default:
			if out := ir.Print(m); !bytes.Equal(out, in.data) {
				err = writeFileAtomic(in.path, out)
			}
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "distpass fmt: %v\n", err)
			return ExitFail
		}
		return ExitOK
	})
}

// notText says what data is when it is not .dpir text (a Paddle
// ProgramDesc, the IR's JSON, …), and "" when it is.
func notText(data []byte) string {
	if f := paddle.Sniff(data); f != paddle.Unknown {
		return "a Paddle " + f.String()
	}
	if isJSONObject(data) {
		return "JSON"
	}
	return ""
}

func runVerify(env *Env, args []string) int {
	fs := newFlagSet(env, "verify", "[-strict] [FILE|-]...",
		"Verify parses each file and checks every structural rule of the IR and\n"+
			"every op against its type's definition (distpass ops lists them): its\n"+
			"slots, its attrs' kinds and values, and its outputs' declared dtypes\n"+
			"and shapes against inference from its inputs. It prints one line per\n"+
			"violation. An op type without a definition (a custom op) is accepted,\n"+
			"and a note on stderr counts such ops; -strict rejects them. No FILE,\n"+
			"or -, reads stdin.")
	strict := fs.Bool("strict", false, "reject ops whose type has no definition")
	files, code, ok := parseFlagsAnywhere(env, fs, args)
	if !ok {
		return code
	}
	return eachModule(env, "verify", files, func(in input, m *ir.Module) int {
		st, err := ops.Verify(m, ops.Options{Strict: *strict})
		if err == nil {
			if len(st.Undefined) > 0 {
				fmt.Fprintf(env.Stderr, "%s: note: %s\n", in.name, undefinedNote(st))
			}
			return ExitOK
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(env.Stderr, "%s: %s\n", in.name, line)
		}
		return ExitFail
	})
}

// undefinedNote says how many ops verify accepted without a definition.
func undefinedNote(st ops.Stats) string {
	n := 0
	var types []string
	for _, tc := range st.Undefined {
		n += tc.Count
		types = append(types, fmt.Sprintf("%s (%d)", tc.Type, tc.Count))
	}
	ops := "ops"
	if n == 1 {
		ops = "op"
	}
	return fmt.Sprintf("%d %s of types without a definition, not checked: %s", n, ops, strings.Join(types, ", "))
}

// writeFileAtomic replaces path with data, keeping its permissions, so that
// an interrupted rewrite never leaves half a file.
func writeFileAtomic(path string, data []byte) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".distpass-fmt-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(info.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// printErr prints err one line per problem, each line naming the file
// it is about (parse errors already start with it).
func printErr(env *Env, file string, err error) {
	for _, line := range strings.Split(err.Error(), "\n") {
		if file != "" && !strings.HasPrefix(line, file+":") {
			line = file + ": " + line
		}
		fmt.Fprintln(env.Stderr, line)
	}
}

var (
	defsMu sync.Mutex
	defsIn = map[string]bool{} // the definition files' texts loaded
)

// loadDefs defines the op types of the definition file at path. A text
// already loaded is not defined again: one process may run several
// commands (the tests do).
func loadDefs(path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	defsMu.Lock()
	defer defsMu.Unlock()
	if defsIn[string(src)] {
		return nil
	}
	ts, err := custom.Parse(path, src)
	if err != nil {
		return err
	}
	if err := custom.Define(ts...); err != nil {
		return err
	}
	defsIn[string(src)] = true
	return nil
}
