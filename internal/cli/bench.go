package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
	"unsafe"

	"github.com/distpass/distpass/interop/mlir"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/registry"
)

const benchArgs = "[-ops N[,N...]] [-ranks R] [-seed S] [-stages LIST] [-repeat N] [-mintime D] [-json] [-mlir FILE] [-dpir FILE] [-mem MB]"

// benchStages are the stages bench knows, in the order it runs them;
// defaultStages those it runs without -stages.
var (
	benchStages   = []string{"chase", "walk", "print", "parse", "verify", "clone", "partition", "partition-all", "partition-classes", "mlir"}
	defaultStages = benchStages[1:9]
)

const benchDoc = `Bench measures distpass on synthetic GPT training modules
(models.SyntheticGPTMesh, annotated dp,mp): for each op count N of -ops,
it builds the module of N ops (at least; the real count is the ops
column) from -seed, prints it and reads it back, so that the stages work
on a module laid out as a command reads it from a file (the generator's
own is scattered: verify took 1.7-1.9 times as long on it), and keeps
them all; then it runs each stage of
-stages in this order on every module, -repeat times (once by default)
on each, before the next stage, so that the growth from one size to the
next compares runs made seconds apart:

  chase              the machine's floor, without distpass: one read per
                     op of the module, each at a random place (known
                     only when the read before is done) in a block of
                     memory as large as the module's heap, built before
                     the stage's first run and counted in its heap;
                     the latency of the machine's memory at that size,
                     which grows with the size when caches, TLBs and
                     page walks stop covering it; only when listed
  walk               the floor: reads every var (name, type) and op
                     (type, attr names, args) of the module once and
                     looks every arg up by name through the block chain
                     (Program.LookupVar), as any pass must; nothing is
                     built. On a machine whose memory slows as the
                     module outgrows its caches and TLBs, walk slows
                     too: read the other stages' growth against it
  print              ir.Print of the module to a buffer
  parse              ir.ParseString of the module's text (no copy, as
                     the CLI does); the module parsed is dropped
  verify             ir.Verify of the module
  clone              Module.Clone
  partition          passes.Partition of rank 0, on a clone made before
                     the stage and not counted
  partition-all      every rank of the mesh, concurrently (GOMAXPROCS at
                     once), outputs not written: passes.PartitionAll,
                     which keeps every rank's module, when they fit in
                     -mem; otherwise "streamed": the same schedule of
                     clone and passes.Partition per rank, each output
                     dropped when done
  partition-classes  passes.PartitionClasses, what partition -all runs:
                     each class of ranks lowered once (its last rank
                     again, as a check, unless every impl the module
                     names is rank-safe: the synthetic GPT's are);
                     rank modules not instantiated
  mlir               interop/mlir.Write of the MLIR twin to io.Discard;
                     only when listed

The mesh has -ranks ranks, dp×mp with dp the largest divisor whose square
is at most R (8: 2×4, the default module; 64: 8×8). Before each run of
a stage a GC runs, so stages do not pay for each other's garbage, and
the collector is paced as a command expecting the largest module's heap
paces it (gctune.PrepareHeap's starting heap, about 4 KB an op: it only
grows, and every module is alive), so that a stage's figures do not
depend on the stages run before it.

With -repeat N each stage runs N times (partition on a new clone each
time) and the figures reported are those of the run of median wall time
(the lower middle one for an even count): on a machine whose cost of
touching fresh memory varies from run to run, as a virtual machine's
does, one run can be far off. With -mintime D too, a stage keeps running
on a module until D has passed since its first run there (setup and
collections included), as go test's -benchtime does: a small module's
runs are short, so that a moment of the machine's slowness weighs more
on each of them, and the same time buys more of them. The JSON lists
every run's wall time.

Each stage reports its wall time; the CPU time of the process (user and
system, every thread) and its minor page faults, from getrusage; its
allocations, count and bytes (runtime.MemStats deltas of Mallocs and
TotalAlloc); the same per op of the module (for partition-all, per
serial op: the work of every rank); and its peak heap: the highest heap
in use (runtime/metrics heap objects + unused bytes, i.e.
MemStats.HeapInuse) sampled every 1ms by a background goroutine and at
the stage's start and end, so a spike shorter than the period can be
missed. Heap figures include what is live across the stage: the module
(module_heap_bytes, with the text its strings share); the other sizes'
modules, alive too, are taken off (the heap in use their generation
added), so that each row's heap is its module's.

With -json the figures are a JSON document with the fields go_version,
goos, goarch, gomaxprocs, num_cpu, seed, repeat, min_time_ns (with
-mintime), ranks, mesh ([dp, mp]), peak_heap_method, load_average (1-minute, before and after the run),
huge_pages (whether the heap was readied for transparent huge pages, as
every command readies it where Linux offers them on request: see
gctune.PrepareHeap; GODEBUG=disablethp=1 turns that off),
modules (one per N: requested_ops, ops, text_bytes, module_heap_bytes
(the module's live heap, its text included), generate_ns (building,
printing and reading back)) and stages (one per N and stage:
stage, requested_ops, ops, ranks (partition-all and -classes), streamed
(partition-all), classes, fallbacks and checked (partition-classes),
wall_ns, cpu_ns, page_faults, ns_per_op, allocs, bytes, allocs_per_op,
bytes_per_op, heap_base_bytes (heap in use as the stage starts),
peak_heap_bytes, runs_wall_ns and wall_iqr_ns (with -repeat or -mintime:
every run's wall time, in order, and their interquartile range), and
for partition clone_ns and runs_clone_ns (the clone each run worked on,
timed as the clone stage times one)),
growth (with two sizes or more: for each stage and each two sizes next
to each other, stage, from_ops, to_ops, ops_ratio,
wall_ratio, and vs_walk, wall_ratio over walk's) and ratios (per module:
ops, partition_over_clone, partition_over_paired_clone (the median over
partition's runs of each run's time over its own clone's: two timings
seconds apart, which the machine's drift moves less than the stages'
medians, minutes apart), classes_over_partition). Sizes are bytes,
times nanoseconds. The table ends with the same growth and ratios.

-mlir FILE writes the MLIR twin of the largest module to FILE, and -dpir
FILE its .dpir text, untimed: the inputs of comparisons with mlir-opt and
of the other commands.`

// benchReport is the JSON document of bench -json.
type benchReport struct {
	GoVersion      string        `json:"go_version"`
	GOOS           string        `json:"goos"`
	GOARCH         string        `json:"goarch"`
	GOMAXPROCS     int           `json:"gomaxprocs"`
	NumCPU         int           `json:"num_cpu"`
	Seed           int64         `json:"seed"`
	Repeat         int           `json:"repeat"`
	MinTimeNs      int64         `json:"min_time_ns,omitempty"`
	Ranks          int           `json:"ranks"`
	Mesh           [2]int        `json:"mesh"` // dp, mp
	PeakHeapMethod string        `json:"peak_heap_method"`
	LoadAverage    [2]float64    `json:"load_average"` // 1-minute, before and after the run
	HugePages      bool          `json:"huge_pages"`   // the heap was readied for huge pages
	Modules        []benchModule `json:"modules"`
	Stages         []benchStage  `json:"stages"`
	Growth         []benchGrowth `json:"growth,omitempty"` // with two module sizes or more
	Ratios         []benchRatio  `json:"ratios,omitempty"`
}

// benchModule describes one generated module.
type benchModule struct {
	RequestedOps    int    `json:"requested_ops"`
	Ops             int    `json:"ops"`        // main and startup
	TextBytes       int    `json:"text_bytes"` // of its .dpir text
	ModuleHeapBytes uint64 `json:"module_heap_bytes"`
	GenerateNs      int64  `json:"generate_ns"`
}

// benchStage is one stage's figures on one module.
type benchStage struct {
	Stage         string  `json:"stage"`
	RequestedOps  int     `json:"requested_ops"`
	Ops           int     `json:"ops"`
	Ranks         int     `json:"ranks,omitempty"`     // partition-all only
	Streamed      bool    `json:"streamed,omitempty"`  // partition-all only
	Classes       int     `json:"classes,omitempty"`   // partition-classes only
	Fallbacks     int     `json:"fallbacks,omitempty"` // partition-classes: classes lowered rank by rank
	Checked       bool    `json:"checked,omitempty"`   // partition-classes: the check lowering ran
	WallNs        int64   `json:"wall_ns"`
	CPUNs         int64   `json:"cpu_ns"`      // user+system, every thread of the process
	PageFaults    int64   `json:"page_faults"` // minor
	NsPerOp       float64 `json:"ns_per_op"`
	Allocs        uint64  `json:"allocs"`
	Bytes         uint64  `json:"bytes"`
	AllocsPerOp   float64 `json:"allocs_per_op"`
	BytesPerOp    float64 `json:"bytes_per_op"`
	HeapBaseBytes uint64  `json:"heap_base_bytes"`
	PeakHeapBytes uint64  `json:"peak_heap_bytes"`
	RunsWallNs    []int64 `json:"runs_wall_ns,omitempty"` // with -repeat or -mintime: every run's
	WallIQRNs     int64   `json:"wall_iqr_ns,omitempty"`  // the interquartile range of RunsWallNs
	// CloneNs (partition only) is the wall time of the clone the run
	// worked on, made just before it as the clone stage makes one; with
	// several runs, RunsCloneNs holds every run's, as RunsWallNs does.
	CloneNs     int64   `json:"clone_ns,omitempty"`
	RunsCloneNs []int64 `json:"runs_clone_ns,omitempty"`
}

const peakHeapMethod = "max of HeapInuse (runtime/metrics /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes) sampled every 1ms by a goroutine and at the stage's start and end"

func runBench(env *Env, args []string) int {
	fs := newFlagSet(env, "bench", benchArgs, benchDoc)
	opsFlag := fs.String("ops", "10000", "the op counts, `N[,N...]`")
	ranks := fs.Int("ranks", 8, "the number of ranks of the mesh")
	seed := fs.Int64("seed", 1, "the seed of the synthetic modules")
	stagesFlag := fs.String("stages", strings.Join(defaultStages, ","), "the stages to run, comma-separated")
	repeat := fs.Int("repeat", 1, "run each stage `N` times and report the run of median wall time")
	minTime := fs.Duration("mintime", 0, "and keep running it on a module until `D` has passed")
	asJSON := fs.Bool("json", false, "print a JSON document instead of a table")
	mlirFile := fs.String("mlir", "", "write the MLIR twin of the largest module to `FILE`")
	dpirFile := fs.String("dpir", "", "write the .dpir text of the largest module to `FILE`")
	memMB := fs.Int64("mem", -1, "partition-all keeps every rank's output only if the estimate fits in this many `MB` (0: always stream; -1: half of the available memory)")
	if code, ok := parseFlags(env, fs, args); !ok {
		return code
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(env.Stderr, "distpass bench: "+format+"\n", a...)
		return ExitUsage
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q", fs.Arg(0))
	}
	var sizes []int
	for _, s := range strings.Split(*opsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return usageErr("-ops: %q is not a positive op count", s)
		}
		sizes = append(sizes, n)
	}
	if *ranks <= 0 {
		return usageErr("-ranks: %d is not a positive rank count", *ranks)
	}
	if *repeat <= 0 {
		return usageErr("-repeat: %d is not a positive count", *repeat)
	}
	if *minTime < 0 {
		return usageErr("-mintime: %v is negative", *minTime)
	}
	want := map[string]bool{}
	for _, s := range strings.Split(*stagesFlag, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(benchStages, s) {
			return usageErr("-stages: unknown stage %q (known: %s)", s, strings.Join(benchStages, ", "))
		}
		want[s] = true
	}
	budget := uint64(*memMB) << 20
	if *memMB < 0 {
		budget = availableMemory() / 2
	}

	dp, mp := meshFor(*ranks)
	rep := benchReport{
		GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(),
		Seed: *seed, Repeat: *repeat, MinTimeNs: minTime.Nanoseconds(), Ranks: *ranks, Mesh: [2]int{dp, mp}, PeakHeapMethod: peakHeapMethod,
	}
	rep.LoadAverage[0] = loadAverage()
	largest := 0
	for i, n := range sizes {
		if n > sizes[largest] {
			largest = i
		}
	}
	st := env.progress()
	defer st.clear()
	reg := registry.DefaultRegistry()
	fail := func(err error) int {
		st.clear()
		printErr(env, "", fmt.Errorf("distpass bench: %w", err))
		return ExitFail
	}
	// Every module is built first and kept, so that a stage runs on
	// every size before the next stage starts: the growth from one size
	// to the next compares runs made seconds apart, not minutes, on a
	// machine whose speed drifts. A size's runs stay together: between
	// two runs at a million ops, a run at a smaller size leaves the
	// memory the large one freed idle through collections, the runtime
	// returns it to the system, and the next large run faults it in
	// again, 4 KB at a time.
	mods := make([]*benchSize, len(sizes))
	for i, n := range sizes {
		st.show("bench: %d ops: generating", n)
		if env.expectHeap(uint64(n) * benchHeapPerOp) {
			rep.HugePages = true
		}
		runtime.GC()
		base := readMemStats()
		t0 := time.Now()
		m, src, err := benchModuleOf(n, *seed, dp, mp)
		gen := time.Since(t0)
		if err != nil {
			return fail(err)
		}
		runtime.GC()
		after := readMemStats()
		mods[i] = &benchSize{
			m:     m,
			src:   src,
			mod:   benchModule{RequestedOps: n, Ops: numOps(m), TextBytes: len(src), GenerateNs: gen.Nanoseconds(), ModuleHeapBytes: max(after.HeapAlloc, base.HeapAlloc) - base.HeapAlloc},
			inuse: max(after.HeapInuse, base.HeapInuse) - base.HeapInuse,
		}
	}
	cfg := benchConfig{reg: reg, ranks: *ranks, budget: budget, seed: *seed}
	perSize := make([][]benchStage, len(sizes))
	for _, stage := range benchStages {
		if !want[stage] {
			continue
		}
		jobs := make([]benchJob, len(sizes))
		for i, sz := range mods {
			jobs[i] = benchJobFor(stage, sz, cfg)
		}
		for i, n := range sizes {
			runs := make([]benchStage, 0, *repeat)
			start := time.Now()
			for k := 0; k < *repeat || time.Since(start) < *minTime; k++ {
				switch {
				case *minTime > 0:
					st.show("bench: %d ops: %s (run %d)", n, stage, k+1)
				case *repeat > 1:
					st.show("bench: %d ops: %s (%d of %d)", n, stage, k+1, *repeat)
				default:
					st.show("bench: %d ops: %s", n, stage)
				}
				r, err := runJob(env, jobs[i], uint64(n)*benchHeapPerOp, otherHeap(mods, i))
				if err != nil {
					return fail(fmt.Errorf("%d ops: %s: %w", n, stage, err))
				}
				runs = append(runs, r)
			}
			jobs[i] = benchJob{} // what it held goes before the next size's runs
			r := medianRun(runs)
			r.Stage, r.RequestedOps, r.Ops = stage, n, mods[i].mod.Ops
			perOp(&r)
			perSize[i] = append(perSize[i], r)
		}
	}
	for i, sz := range mods {
		rep.Stages = append(rep.Stages, perSize[i]...)
		rep.Modules = append(rep.Modules, sz.mod)
	}
	for _, out := range []struct {
		path  string
		write func(string, *ir.Module) error
	}{
		{*mlirFile, writeMLIR},
		// The text the module was read back from is its print.
		{*dpirFile, func(path string, _ *ir.Module) error { return os.WriteFile(path, mods[largest].src, 0o666) }},
	} {
		if out.path == "" {
			continue
		}
		st.show("bench: %d ops: writing %s", sizes[largest], out.path)
		if err := out.write(out.path, mods[largest].m); err != nil {
			st.clear()
			fmt.Fprintf(env.Stderr, "distpass bench: %v\n", err)
			return ExitFail
		}
	}
	st.clear()
	rep.LoadAverage[1] = loadAverage()
	summarize(&rep)
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(env.Stderr, "distpass bench: %v\n", err)
			return ExitFail
		}
		return ExitOK
	}
	printBenchTable(env.Stdout, &rep)
	return ExitOK
}

// benchHeapPerOp is about the heap the largest stage (partition-classes)
// reaches per op of the synthetic module.
const benchHeapPerOp = 4 << 10

// benchSize is one module of the run.
type benchSize struct {
	m     *ir.Module
	src   []byte // m's text, which m was parsed from and whose bytes its strings share
	mod   benchModule
	inuse uint64 // the module's share of HeapInuse (its text's included), with its spans' unused room
}

// benchModuleOf generates the synthetic module of n ops and reads it back
// from its text, which it returns too: the stages work on a module as a
// command gets it from a file, laid out by the parser in the order of its
// text (and sharing that text's bytes), not as the generator's builder
// left it. The layout matters: verify of a generated million-op module
// took 1.1 s, of the same module parsed 0.65 s.
func benchModuleOf(n int, seed int64, dp, mp int) (*ir.Module, []byte, error) {
	gen, err := models.SyntheticGPTMesh(n, seed, dp, mp)
	if err != nil {
		return nil, nil, err
	}
	src := ir.Print(gen)
	gen = nil
	m, err := ir.ParseString("synthetic.dpir", unsafe.String(unsafe.SliceData(src), len(src)))
	if err != nil {
		return nil, nil, fmt.Errorf("reading the synthetic module back: %w", err)
	}
	return m, src, nil
}

// benchConfig is what the stages need besides the module.
type benchConfig struct {
	reg    *registry.Registry
	ranks  int
	budget uint64 // for partition-all's outputs
	seed   int64  // for chase's ring
}

// benchJob is one stage on one module.
type benchJob struct {
	setup func()              // untimed, before each run; may be nil
	run   func() error        // the work timed
	after func(r *benchStage) // untimed, after each run: adds the run's own figures and drops its outputs; may be nil
}

// benchJobFor returns stage's job on sz.
func benchJobFor(stage string, sz *benchSize, cfg benchConfig) benchJob {
	m := sz.m
	switch stage {
	case "chase":
		var ring *chaseRing
		return benchJob{
			setup: func() {
				if ring == nil {
					ring = newChaseRing(sz.mod.ModuleHeapBytes, cfg.seed)
				}
			},
			run: func() error { ring.chase(sz.mod.Ops); return nil },
		}
	case "walk":
		return benchJob{run: func() error { return walkModule(m) }}
	case "print":
		var out []byte
		return benchJob{
			run:   func() error { out = ir.Print(m); return nil },
			after: func(*benchStage) { runtime.KeepAlive(out); out = nil },
		}
	case "parse":
		var parsed *ir.Module
		return benchJob{
			run: func() error {
				var err error
				parsed, err = ir.ParseString("synthetic.dpir", unsafe.String(unsafe.SliceData(sz.src), len(sz.src)))
				return err
			},
			after: func(*benchStage) { runtime.KeepAlive(parsed); parsed = nil },
		}
	case "verify":
		return benchJob{run: func() error { return ir.Verify(m) }}
	case "clone":
		var c *ir.Module
		return benchJob{
			run:   func() error { c = m.Clone(); return nil },
			after: func(*benchStage) { runtime.KeepAlive(c); c = nil },
		}
	case "partition":
		// The clone is timed as the clone stage times one (a collection
		// first), so that each run's partition can be set against a
		// clone made seconds before it, not minutes: the machine's
		// speed drifts.
		var c *ir.Module
		var cloneNs int64
		return benchJob{
			setup: func() {
				runtime.GC()
				t0 := time.Now()
				c = m.Clone()
				cloneNs = time.Since(t0).Nanoseconds()
			},
			run:   func() error { return passes.Partition(c, cfg.reg, 0) },
			after: func(r *benchStage) { c, r.CloneNs = nil, cloneNs },
		}
	case "partition-all":
		// Each rank's output is about the size of the serial module;
		// GOMAXPROCS more are being built at any time.
		need := uint64(cfg.ranks+2*runtime.GOMAXPROCS(0)) * sz.mod.ModuleHeapBytes
		stream := need > cfg.budget
		var outs []*ir.Module
		return benchJob{
			run: func() error {
				if stream {
					return partitionStream(m, cfg.reg)
				}
				var err error
				outs, err = passes.PartitionAll(context.Background(), m, cfg.reg)
				return err
			},
			after: func(r *benchStage) {
				runtime.KeepAlive(outs)
				outs = nil
				r.Ranks, r.Streamed = cfg.ranks, stream
			},
		}
	case "partition-classes":
		var cs *passes.Classes
		return benchJob{
			run: func() error {
				var err error
				cs, err = passes.PartitionClasses(context.Background(), m, cfg.reg, nil)
				return err
			},
			after: func(r *benchStage) {
				r.Ranks, r.Classes, r.Checked = cfg.ranks, len(cs.Classes), cs.Checked
				for _, c := range cs.Classes {
					if c.Fallback != "" {
						r.Fallbacks++
					}
				}
				cs = nil
			},
		}
	case "mlir":
		return benchJob{run: func() error { return mlir.Write(io.Discard, m) }}
	}
	panic("bench: no job for stage " + stage)
}

// runJob runs j once: setup, then, with heap bytes announced as a
// command expecting them announces them, the timed run, then after.
// others is the heap of the other modules (and their text), alive at
// the same time: it is taken off the run's heap figures, which are then
// this module's alone.
func runJob(env *Env, j benchJob, heap, others uint64) (benchStage, error) {
	// The announcement restarts the starting heap when heap is the
	// largest announced, whatever the runs before left (a stage whose
	// live heap passed half the expected heap leaves GOGC at 100); a
	// smaller module's runs keep the largest one's. It comes before the
	// setup, which partition times.
	env.expectHeap(heap)
	if j.setup != nil {
		j.setup()
	}
	r, err := measure(j.run)
	if err != nil {
		return r, err
	}
	r.HeapBaseBytes -= min(r.HeapBaseBytes, others)
	r.PeakHeapBytes -= min(r.PeakHeapBytes, others)
	if j.after != nil {
		j.after(&r)
	}
	return r, nil
}

// otherHeap returns the heap in use by the modules other than mods[i],
// their text included.
func otherHeap(mods []*benchSize, i int) uint64 {
	var n uint64
	for j, sz := range mods {
		if j != i {
			n += sz.inuse
		}
	}
	return n
}

// meshFor returns dp×mp = ranks with dp the largest divisor whose square
// is at most ranks.
func meshFor(ranks int) (dp, mp int) {
	dp = 1
	for d := 1; d*d <= ranks; d++ {
		if ranks%d == 0 {
			dp = d
		}
	}
	return dp, ranks / dp
}

func numOps(m *ir.Module) int {
	n := 0
	for _, p := range m.Programs() {
		n += p.NumOps()
	}
	return n
}

func readMemStats() *runtime.MemStats {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return &ms
}

// measure runs f after a GC, timing it, counting its allocations and
// sampling the heap while it runs.
func measure(f func() error) (benchStage, error) {
	runtime.GC()
	s := startHeapSampler(time.Millisecond)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0, flt0, _ := rusage()
	t0 := time.Now()
	err := f()
	wall := time.Since(t0)
	cpu1, flt1, _ := rusage()
	runtime.ReadMemStats(&after)
	base, peak := s.stop()
	peak = max(peak, after.HeapInuse)
	return benchStage{
		WallNs:        wall.Nanoseconds(),
		CPUNs:         cpu1 - cpu0,
		PageFaults:    flt1 - flt0,
		Allocs:        after.Mallocs - before.Mallocs,
		Bytes:         after.TotalAlloc - before.TotalAlloc,
		HeapBaseBytes: base,
		PeakHeapBytes: peak,
	}, err
}

// medianRun returns the run of median wall time (the lower middle one of
// an even count), with every run's wall time in RunsWallNs and their
// interquartile range in WallIQRNs when there is more than one. The
// quartiles of n sorted runs are runs n/4 and n-1-n/4, counting from 0.
func medianRun(runs []benchStage) benchStage {
	if len(runs) == 1 {
		return runs[0]
	}
	walls := make([]int64, len(runs))
	for i, r := range runs {
		walls[i] = r.WallNs
	}
	order := make([]int, len(runs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(walls[a], walls[b]) })
	n := len(runs)
	r := runs[order[(n-1)/2]]
	r.RunsWallNs = walls
	r.WallIQRNs = walls[order[n-1-n/4]] - walls[order[n/4]]
	if r.CloneNs != 0 {
		r.RunsCloneNs = make([]int64, n)
		for i, run := range runs {
			r.RunsCloneNs[i] = run.CloneNs
		}
	}
	return r
}

func perOp(r *benchStage) {
	if r.Ops == 0 {
		return
	}
	n := float64(r.Ops)
	r.NsPerOp = float64(r.WallNs) / n
	r.AllocsPerOp = float64(r.Allocs) / n
	r.BytesPerOp = float64(r.Bytes) / n
}

// heapSampler records the highest HeapInuse it sees.
type heapSampler struct {
	done chan struct{}
	res  chan [2]uint64 // first sample, peak
}

var heapMetrics = []string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes"}

func startHeapSampler(period time.Duration) *heapSampler {
	s := &heapSampler{done: make(chan struct{}), res: make(chan [2]uint64, 1)}
	samples := make([]metrics.Sample, len(heapMetrics))
	for i, n := range heapMetrics {
		samples[i].Name = n
	}
	read := func() uint64 {
		metrics.Read(samples)
		var sum uint64
		for _, x := range samples {
			if x.Value.Kind() == metrics.KindUint64 {
				sum += x.Value.Uint64()
			}
		}
		return sum
	}
	first := read()
	ready := make(chan struct{})
	go func() {
		t := time.NewTicker(period)
		defer t.Stop()
		peak := first
		close(ready)
		for {
			select {
			case <-t.C:
				peak = max(peak, read())
			case <-s.done:
				s.res <- [2]uint64{first, max(peak, read())}
				return
			}
		}
	}()
	<-ready
	return s
}

// stop ends the sampling and returns the first sample and the peak.
func (s *heapSampler) stop() (first, peak uint64) {
	close(s.done)
	r := <-s.res
	return r[0], r[1]
}

// partitionStream partitions a clone of m for every rank, GOMAXPROCS at
// once as PartitionAll does, and drops each output when it is done.
func partitionStream(m *ir.Module, reg *registry.Registry) error {
	ranks := passes.Ranks(m)
	errs := make([]error, len(ranks))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, r := range ranks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = passes.Partition(m.Clone(), reg, r)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// availableMemory returns MemAvailable of /proc/meminfo, or 8 GiB where
// there is none.
func availableMemory() uint64 {
	const fallback = 8 << 30
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return fallback
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.ParseUint(f[0], 10, 64); err == nil {
					return kb << 10
				}
			}
		}
	}
	return fallback
}

// loadAverage returns the 1-minute load average of /proc/loadavg, or 0.
func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0
	}
	x, _ := strconv.ParseFloat(f[0], 64)
	return x
}

func writeMLIR(path string, m *ir.Module) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = mlir.Write(f, m)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func printBenchTable(w io.Writer, rep *benchReport) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	pages := "base pages"
	if rep.HugePages {
		pages = "huge pages"
	}
	fmt.Fprintf(bw, "distpass bench: %s %s/%s, GOMAXPROCS=%d of %d CPUs, load %.2f→%.2f, heap on %s, mesh %dx%d (%d ranks), seed %d\n",
		rep.GoVersion, rep.GOOS, rep.GOARCH, rep.GOMAXPROCS, rep.NumCPU, rep.LoadAverage[0], rep.LoadAverage[1],
		pages, rep.Mesh[0], rep.Mesh[1], rep.Ranks, rep.Seed)
	for _, m := range rep.Modules {
		fmt.Fprintf(bw, "module of %d ops: generated and read back in %s, %.1f MB of heap, %.1f MB of text\n",
			m.Ops, fmtWall(m.GenerateNs), mb(m.ModuleHeapBytes), mb(uint64(m.TextBytes)))
	}
	bw.WriteByte('\n')
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	runs := rep.Repeat > 1 || rep.MinTimeNs > 0
	head := "stage\tops\twall\tcpu\tns/op\tallocs/op\tbytes/op\tpeak heap MB\t"
	if runs {
		head += "runs\tIQR\t"
	}
	fmt.Fprintln(tw, head)
	streamed := false
	for _, s := range rep.Stages {
		name := s.Stage
		if s.Streamed {
			name += "*"
			streamed = true
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.0f\t%.2f\t%.0f\t%.1f\t", name, s.Ops, fmtWall(s.WallNs), fmtWall(s.CPUNs), s.NsPerOp, s.AllocsPerOp, s.BytesPerOp, mb(s.PeakHeapBytes))
		if runs {
			fmt.Fprintf(tw, "%d\t%.0f%%\t", len(s.RunsWallNs), 100*float64(s.WallIQRNs)/float64(max(s.WallNs, 1)))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	var notes bytes.Buffer
	fmt.Fprintf(&notes, "\nns/op is wall time; cpu is the process's user+system time (every thread).\nPer-op figures are per op of the serial module (partition-all and -classes: the work of all %d ranks).\n", rep.Ranks)
	switch {
	case rep.MinTimeNs > 0:
		times := ""
		if rep.Repeat > 1 {
			times = fmt.Sprintf(", and at least %d times,", rep.Repeat)
		}
		fmt.Fprintf(&notes, "Each stage ran for at least %s%s on each module; its row is the run of median wall time, IQR the interquartile range of the runs' wall times over that median.\n", time.Duration(rep.MinTimeNs), times)
	case rep.Repeat > 1:
		fmt.Fprintf(&notes, "Each stage ran %d times; its row is the run of median wall time, IQR the interquartile range of the runs' wall times over that median.\n", rep.Repeat)
	}
	for _, s := range rep.Stages {
		if s.Stage == "partition-classes" {
			check := "no check lowering (every impl rank-safe)"
			if s.Checked {
				check = "each class's last rank lowered again to check it"
			}
			fmt.Fprintf(&notes, "partition-classes, %d ops: classes %d, lowered rank by rank %d; %s.\n", s.Ops, s.Classes, s.Fallbacks, check)
		}
	}
	if streamed {
		notes.WriteString("* streamed: the outputs of every rank would not fit in -mem; each was dropped when done.\n")
	}
	printSummary(&notes, rep)
	bw.Write(notes.Bytes())
}

func fmtWall(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.1fµs", float64(d)/float64(time.Microsecond))
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }

// walkModule is the walk stage: one read of every var and op of m, every
// arg looked up by name. An arg that names no var is an error, which
// also keeps the lookups from being optimized away.
func walkModule(m *ir.Module) error {
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			if b == nil {
				continue
			}
			n := 0
			for _, v := range b.Vars() {
				if v != nil {
					n += len(v.Name()) + len(v.Type.Shape)
				}
			}
			for _, op := range b.Ops {
				if op == nil {
					continue
				}
				n += len(op.Type) + len(op.Attrs)
				for _, a := range op.Attrs {
					n += len(a.Name)
				}
				for _, side := range [2][]ir.Slot{op.Inputs, op.Outputs} {
					for _, s := range side {
						for _, a := range s.Args {
							if p.LookupVar(b, a) == nil {
								return fmt.Errorf("walk: %s block %d: op %d %s: no var %s", p.Name, b.Index, op.ID, op.Type, a)
							}
						}
					}
				}
			}
			if n == 0 && len(b.Ops)+b.NumVars() > 0 {
				return fmt.Errorf("walk: %s block %d: read nothing", p.Name, b.Index)
			}
		}
	}
	return nil
}
