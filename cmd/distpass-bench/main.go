// Command distpass-bench measures what go test -bench does not measure
// well, and prints it in the Go benchmark format, for benchstat:
//
//   - PartitionOverClone/ops=N: one rank's partition of the synthetic GPT
//     (models.SyntheticGPT, a 2×4 mesh), each run on a clone timed just
//     before it (the least of three), reported as the partition's time
//     and as that over its own clone's (the partition/clone unit): two
//     timings made one right after the other, which the machine's drift
//     moves less than two benchmarks minutes apart.
//   - TwinParseVerifyPrint/ops=N/tool=distpass|mlir-opt: the .dpir text
//     of the synthetic GPT read from a file, parsed, verified and printed
//     to /dev/null in process, against mlir-opt --allow-unregistered-dialect
//     doing the same to the module's MLIR twin (interop/mlir), as a
//     process of its own.
//   - PartitionAll/ops=N/ranks=1|R: on an R-rank mesh, every rank as
//     partition -all lowers them (passes.PartitionClasses, rank modules
//     not instantiated) against one rank's partition (passes.Partition, of
//     a clone made untimed).
//
// Usage:
//
//	distpass-bench [-bench REGEXP] [-count N] [-ops N,N...] [-twin-ops N] [-ranks R] [-seed S] [-mlir-opt PATH]
//
// Every module is read back from its printed text, as a command reads a
// file, and built before the first run. With -count N every benchmark
// runs once per round, N rounds, so that each benchmark's runs are
// spread over the whole run and the machine's drift falls on all of
// them alike. Each run is one iteration, after a collection. The heap is
// paced as cmd/distpass paces it (gctune.StartingHeap). Compare two
// builds with `go tool benchstat old.txt new.txt`, and the columns of one
// run with `go tool benchstat -col /tool FILE` (or /ranks); BENCHMARKS.md
// at the repository's root has the figures and the commands.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/distpass/distpass/internal/gctune"
)

// startingHeap is cmd/distpass's, so that the figures are the command's.
const startingHeap = 512 << 20

func main() {
	gctune.StartingHeap(startingHeap)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("distpass-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: distpass-bench [flags]\n\nDistpass-bench times partitioning and the text round trip on synthetic GPTs\nand prints the results in the Go benchmark format, for benchstat.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	pattern := fs.String("bench", ".", "run only the benchmarks whose name matches `REGEXP` (as go test -bench, without the Benchmark prefix)")
	count := fs.Int("count", 1, "run every benchmark `N` times, in N rounds")
	opsFlag := fs.String("ops", "100000,1000000", "the op counts, `N[,N...]`, of the partition benchmarks")
	twinOps := fs.Int("twin-ops", 200000, "the op count of the twin's module")
	ranks := fs.Int("ranks", 64, "the rank count of PartitionAll's mesh")
	seed := fs.Int64("seed", 1, "the seed of the synthetic modules")
	mlirOpt := fs.String("mlir-opt", "", "the mlir-opt to run, at `PATH` (default: mlir-opt-16 or mlir-opt found on $PATH)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "distpass-bench: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q", fs.Arg(0))
	}
	re, err := regexp.Compile(*pattern)
	if err != nil {
		return usageErr("-bench: %v", err)
	}
	var sizes []int
	for _, s := range strings.Split(*opsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return usageErr("-ops: %q is not a positive op count", s)
		}
		sizes = append(sizes, n)
	}
	switch {
	case *count <= 0:
		return usageErr("-count: %d is not a positive count", *count)
	case *twinOps <= 0:
		return usageErr("-twin-ops: %d is not a positive op count", *twinOps)
	case *ranks <= 0:
		return usageErr("-ranks: %d is not a positive rank count", *ranks)
	}
	if *mlirOpt == "" {
		*mlirOpt = findMLIROpt()
	}
	dir, err := os.MkdirTemp("", "distpass-bench-")
	if err != nil {
		fmt.Fprintf(stderr, "distpass-bench: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)

	s := &suite{seed: *seed, dir: dir, modules: map[moduleKey]*module{}}
	var all []benchmark
	for _, n := range sizes {
		all = append(all, s.partitionOverClone(n))
	}
	all = append(all, s.twin(*twinOps, *mlirOpt)...)
	for _, n := range sizes {
		all = append(all, s.partitionAll(n, *ranks)...)
	}
	var selected []benchmark
	for _, b := range all {
		if re.MatchString(b.name) {
			selected = append(selected, b)
		}
	}
	for _, b := range selected {
		if b.skip != "" {
			fmt.Fprintf(stderr, "distpass-bench: Benchmark%s skipped: %s\n", b.name, b.skip)
		}
	}
	// Every module is built before the first run, so that no run pays
	// for another's setup.
	for _, b := range selected {
		if err := b.prepare(); err != nil {
			fmt.Fprintf(stderr, "distpass-bench: Benchmark%s: %v\n", b.name, err)
			return 1
		}
	}
	fmt.Fprintf(stdout, "goos: %s\ngoarch: %s\npkg: github.com/distpass/distpass/cmd/distpass-bench\n", runtime.GOOS, runtime.GOARCH)
	if cpu := cpuName(); cpu != "" {
		fmt.Fprintf(stdout, "cpu: %s\n", cpu)
	}
	procs := ""
	if p := runtime.GOMAXPROCS(0); p > 1 {
		procs = "-" + strconv.Itoa(p) // as go test names them
	}
	for range *count {
		for _, b := range selected {
			if b.skip != "" {
				continue
			}
			r, err := b.run()
			if err != nil {
				fmt.Fprintf(stderr, "distpass-bench: Benchmark%s: %v\n", b.name, err)
				return 1
			}
			fmt.Fprintf(stdout, "Benchmark%s%s\t%8d\t%s\n", b.name, procs, 1, r)
		}
	}
	return 0
}

// findMLIROpt returns the path of mlir-opt-16 or mlir-opt, or "".
func findMLIROpt() string {
	for _, name := range []string{"mlir-opt-16", "mlir-opt"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// cpuName is the processor's model name from /proc/cpuinfo, as go test's
// "cpu:" line has it, or "".
func cpuName() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
