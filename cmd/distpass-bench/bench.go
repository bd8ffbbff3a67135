package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"
	"unsafe"

	"github.com/distpass/distpass/interop/mlir"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
)

// benchmark is one line of every round.
type benchmark struct {
	name    string // without the Benchmark prefix
	skip    string // why it does not run, or ""
	prepare func() error
	run     func() (sample, error)
}

// sample is one run's figures: the time, and the allocations where they
// are the process's own.
type sample struct {
	ns            int64
	bytes, allocs uint64
	mem           bool // bytes and allocs were counted
	extra         []metric
}

type metric struct {
	value float64
	unit  string
	prec  int // digits after the point
}

// String is the sample's value-unit pairs, as go test prints them.
func (s sample) String() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d ns/op", s.ns)
	if s.mem {
		fmt.Fprintf(&b, "\t%d B/op\t%d allocs/op", s.bytes, s.allocs)
	}
	for _, m := range s.extra {
		fmt.Fprintf(&b, "\t%s %s", strconv.FormatFloat(m.value, 'f', m.prec, 64), m.unit)
	}
	return b.String()
}

// measure runs f after a collection, timing it and counting its
// allocations.
func measure(f func() error) (sample, error) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	t0 := time.Now()
	err := f()
	ns := time.Since(t0).Nanoseconds()
	runtime.ReadMemStats(&after)
	return sample{ns: ns, bytes: after.TotalAlloc - before.TotalAlloc, allocs: after.Mallocs - before.Mallocs, mem: true}, err
}

// suite holds the modules the benchmarks share.
type suite struct {
	seed    int64
	dir     string // for the twin's files
	reg     *lower.Registry
	modules map[moduleKey]*module
}

type moduleKey struct{ ops, dp, mp int }

// module is a synthetic GPT read back from its text, which it keeps: its
// names point into it.
type module struct {
	m   *ir.Module
	src []byte
}

// module returns the synthetic GPT of n ops on a dp×mp mesh, building it
// the first time: generated, printed and parsed back without a copy, as
// the distpass command reads a file, so that the benchmarks work on the
// parser's layout of it, not the generator's.
func (s *suite) module(n, dp, mp int) (*module, error) {
	k := moduleKey{n, dp, mp}
	if md := s.modules[k]; md != nil {
		return md, nil
	}
	gen, err := models.SyntheticGPTMesh(n, s.seed, dp, mp)
	if err != nil {
		return nil, err
	}
	src := ir.Print(gen)
	m, err := ir.ParseString("synthetic.dpir", unsafe.String(unsafe.SliceData(src), len(src)))
	if err != nil {
		return nil, fmt.Errorf("reading the synthetic module back: %w", err)
	}
	md := &module{m: m, src: src}
	s.modules[k] = md
	return md, nil
}

func (s *suite) registry() *lower.Registry {
	if s.reg == nil {
		s.reg = lower.DefaultRegistry()
	}
	return s.reg
}

// partitionOverClone is one rank's partition on a clone timed just
// before it, the least of three clones: a process's first large clone
// pays for faulting fresh pages in (up to six times a later one's at
// 10^6 ops), as much as the heap the benchmarks before it left, which
// the yardstick must not measure.
func (s *suite) partitionOverClone(n int) benchmark {
	var md *module
	return benchmark{
		name:    "PartitionOverClone/ops=" + strconv.Itoa(n),
		prepare: func() (err error) { md, err = s.module(n, 2, 4); return err },
		run: func() (sample, error) {
			var c *ir.Module
			var clone sample
			for i := range 3 {
				c = nil
				cs, _ := measure(func() error { c = md.m.Clone(); return nil })
				if i == 0 || cs.ns < clone.ns {
					clone = cs
				}
			}
			r, err := measure(func() error { return passes.Partition(c, s.registry(), 0) })
			r.extra = []metric{{float64(clone.ns), "clone-ns/op", 0}, {float64(r.ns) / float64(max(clone.ns, 1)), "partition/clone", 3}}
			return r, err
		},
	}
}

// twin is the text round trip of the module of n ops: distpass on its
// .dpir text, mlir-opt on its MLIR twin, each read from a file and
// printed to /dev/null.
func (s *suite) twin(n int, mlirOpt string) []benchmark {
	name := "TwinParseVerifyPrint/ops=" + strconv.Itoa(n)
	dpir, twin := filepath.Join(s.dir, "twin.dpir"), filepath.Join(s.dir, "twin.mlir")
	// Both benchmarks need the files; the first to be prepared writes them.
	written := false
	prepare := func() error {
		if written {
			return nil
		}
		md, err := s.module(n, 2, 4)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dpir, md.src, 0o644); err != nil {
			return err
		}
		f, err := os.Create(twin)
		if err != nil {
			return err
		}
		err = mlir.Write(f, md.m)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		written = err == nil
		return err
	}
	ours := benchmark{
		name:    name + "/tool=distpass",
		prepare: prepare,
		run: func() (sample, error) {
			null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			if err != nil {
				return sample{}, err
			}
			defer null.Close()
			return measure(func() error {
				src, err := os.ReadFile(dpir)
				if err != nil {
					return err
				}
				m, err := ir.ParseString(dpir, unsafe.String(unsafe.SliceData(src), len(src)))
				if err != nil {
					return err
				}
				if err := ir.Verify(m); err != nil {
					return err
				}
				return ir.Fprint(null, m)
			})
		},
	}
	theirs := benchmark{
		name:    name + "/tool=mlir-opt",
		prepare: prepare,
		run: func() (sample, error) {
			cmd := exec.Command(mlirOpt, "--allow-unregistered-dialect", twin)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr // a nil Stdout is the null device
			t0 := time.Now()
			err := cmd.Run()
			ns := time.Since(t0).Nanoseconds()
			if err != nil {
				return sample{}, fmt.Errorf("%s: %v: %s", mlirOpt, err, stderr.Bytes())
			}
			return sample{ns: ns}, nil
		},
	}
	if mlirOpt == "" {
		theirs.skip = "no mlir-opt-16 or mlir-opt on PATH (Debian: apt-get install mlir-16-tools), and no -mlir-opt"
	}
	return []benchmark{ours, theirs}
}

// partitionAll is every rank of a mesh of ranks ranks, as partition -all
// lowers them, against one rank's partition on a clone made untimed.
func (s *suite) partitionAll(n, ranks int) []benchmark {
	dp, mp := meshFor(ranks)
	name := "PartitionAll/ops=" + strconv.Itoa(n) + "/ranks="
	var md *module
	prepare := func() (err error) { md, err = s.module(n, dp, mp); return err }
	one := benchmark{
		name:    name + "1",
		prepare: prepare,
		run: func() (sample, error) {
			c := md.m.Clone()
			return measure(func() error { return passes.Partition(c, s.registry(), 0) })
		},
	}
	all := benchmark{
		name:    name + strconv.Itoa(ranks),
		prepare: prepare,
		run: func() (sample, error) {
			return measure(func() error {
				_, err := passes.PartitionClasses(context.Background(), md.m, s.registry(), nil)
				return err
			})
		},
	}
	if ranks == 1 {
		return []benchmark{one}
	}
	return []benchmark{one, all}
}

// meshFor returns dp×mp = ranks with dp the largest divisor whose square
// is at most ranks: 8 ranks are 2×4, 64 are 8×8.
func meshFor(ranks int) (dp, mp int) {
	dp = 1
	for d := 1; d*d <= ranks; d++ {
		if ranks%d == 0 {
			dp = d
		}
	}
	return dp, ranks / dp
}
