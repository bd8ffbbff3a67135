package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/distpass/distpass/internal/par"
	"github.com/distpass/distpass/interop/paddle"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/passes"
)

func runPartition(env *Env, args []string) int {
	fs := newFlagSet(env, "partition", "-rank R [-o FILE] [instrument flags] [FILE|-]\n       distpass partition -all -o DIR [-shared | -format dpir|pdmodel] [FILE|-]",
		`Partition produces the SPMD program of one rank (-rank R, to stdout or
to -o FILE), or of every rank of the module's meshes (-all, as
rank<R>.dpir files in the directory -o DIR). The input is not changed.
With -rank, the instrument flags of 'distpass run' apply to the pipeline
partition{rank=R}; -all takes none of them, nor -rank -shared (a usage
error, exit 2).

-all lowers once per class of ranks that belong to the same meshes and
answer alike what the lowering read of the rank (see lower.RankRead),
then gives every other rank of a class its own ring ids and embedding
offsets; see passes.PartitionClasses. With -shared it
writes class<K>.dpir, the program of each class's first rank, and
ranks.json:
  {"version": 1, "classes": [{"file": "class0.dpir", "ranks": [0, 1, …],
    "sites": [{"program": "main", "op": 12, "attr": "ring_id", "value": 0}, …],
    "values": {"1": [3, …], …}}],
   "plain": {"5": "rank5.dpir"}}
rank R's program is its class's file with program ranks R and, for each
site, the attr set to values["R"][site.value] (an int, or a list of ints
for a random op's shard_offset: sites that share a value, such as every
collective over one mesh dim, share an entry); a
class that had to be
lowered rank by rank is written as rank<R>.dpir files, listed in plain.

-all -format pdmodel writes each rank's programs as Paddle saves them,
two ProgramDesc files, rank<R>.pdmodel and rank<R>.startup.pdmodel (when
the module has a startup program), and beside them rank<R>.json, the
sidecar of what a ProgramDesc cannot hold (the rank, the process-group
table that ring_id attrs point into, meshes, dists, ...). 'distpass import
rank<R>.pdmodel -startup rank<R>.startup.pdmodel -sidecar rank<R>.json'
gives the rank's module back. Each rank's startup ProgramDesc begins by
creating the communicator of every ring its programs use, in ascending
ring id order on every rank (created in different orders, they hang): a
c_gen_nccl_id and a c_comm_init per ring, the rank's index in the group
as its rank, the group's size as nranks (a startup program is made for
a rank that has none). -endpoints gives each rank's host:port, one a
rank in ascending rank order; without it, rank R is 127.0.0.1:(6170+R),
ranks on one machine.`)
	rankFlag := rangeInt(fs, "rank", 0, 0, math.MaxInt, "the rank `R` to produce")
	all := fs.Bool("all", false, "produce every rank")
	out := fs.String("o", "", "with -rank: write to `FILE` (default, or -: stdout); with -all: the directory for the ranks' files")
	shared := fs.Bool("shared", false, "with -all: write each class's program once (class<K>.dpir) and ranks.json, the attrs each rank differs in")
	format := choice(fs, "format", []string{"dpir", "pdmodel"}, "with -all: the `FORMAT` of each rank's files: dpir (text) or pdmodel (Paddle ProgramDescs and a sidecar)")
	endpoints := fs.String("endpoints", "", "with -format pdmodel: each rank's `host:port,...`, in ascending rank order (default 127.0.0.1:(6170+R) for rank R)")
	flags := addInstrumentFlags(fs)
	files, code, ok := parseFlagsAnywhere(env, fs, args)
	if !ok {
		return code
	}
	rank := rankFlag.v
	if rankFlag.set == *all {
		fmt.Fprintln(env.Stderr, "distpass partition: give exactly one of -rank R and -all")
		return ExitUsage
	}
	if *all && isStdout(*out) {
		fmt.Fprintln(env.Stderr, "distpass partition: -all writes one file per rank: give -o DIR")
		return ExitUsage
	}
	if *shared && !*all {
		fmt.Fprintln(env.Stderr, "distpass partition: -shared goes with -all (it writes the class programs of every rank)")
		return ExitUsage
	}
	if *all {
		// -all lowers by rank classes, outside a pass manager: no
		// instrument sees it, so none may be given and then ignored.
		var set []string
		fs.Visit(func(f *flag.Flag) {
			if !slices.Contains([]string{"all", "o", "shared", "format", "endpoints"}, f.Name) {
				set = append(set, "-"+f.Name)
			}
		})
		if len(set) > 0 {
			fmt.Fprintf(env.Stderr, "distpass partition: %s: not with -all (it lowers by rank classes, which the instruments do not see); give -rank R\n", strings.Join(set, ", "))
			return ExitUsage
		}
	}
	if format.v != "dpir" && (!*all || *shared) {
		fmt.Fprintln(env.Stderr, "distpass partition: -format pdmodel goes with -all and without -shared (for one rank, 'distpass export -startup' its program)")
		return ExitUsage
	}
	eps, err := parseEndpoints(*endpoints)
	if err == nil && *endpoints != "" && format.v != "pdmodel" {
		err = fmt.Errorf("goes with -all -format pdmodel")
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "distpass partition: -endpoints: %v\n", err)
		return ExitUsage
	}
	in, m, code, ok := loadOne(env, "partition", files)
	if !ok {
		return code
	}
	flags.input = in.name
	if ranks := passes.Ranks(m); eps != nil && len(eps) != len(ranks) {
		fmt.Fprintf(env.Stderr, "distpass partition: -endpoints: %d entries, and %s's meshes have %d ranks (%v): give one a rank, in ascending rank order\n", len(eps), in.name, len(ranks), ranks)
		return ExitUsage
	}
	if *all {
		return partitionAllTo(env, in.name, m, *out, *shared, format.v == "pdmodel", endpointOf(eps, passes.Ranks(m)))
	}
	pl, err := passes.DefaultRegistry().Parse("partition{rank=" + strconv.Itoa(rank) + "}")
	if err != nil {
		fmt.Fprintf(env.Stderr, "distpass partition: %v\n", err)
		return ExitUsage
	}
	return runPipeline(env, pl, m, flags, *out)
}

func writeModule(env *Env, path string, m *ir.Module) error {
	if isStdout(path) {
		return ir.Fprint(env.Stdout, m)
	}
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

// partitionAll writes every rank's program into dir, as text or with
// pdmodel as Paddle files, or with shared the classes' programs and
// ranks.json. Printing and writing use every core.
func partitionAll(env *Env, name string, m *ir.Module, dir string, shared, pdmodel bool) int {
	return partitionAllTo(env, name, m, dir, shared, pdmodel, endpointOf(nil, nil))
}

// partitionAllTo is partitionAll, with pdmodel each rank's endpoint given
// by endpoint, for its startup's communicator set-up.
func partitionAllTo(env *Env, name string, m *ir.Module, dir string, shared, pdmodel bool, endpoint func(rank int) (string, error)) int {
	st := env.progress()
	cs, err := passes.PartitionClasses(context.Background(), m, lower.DefaultRegistry(), func(done, total int) {
		st.show("partition: lowered %d/%d", done, total)
	})
	if err != nil {
		st.clear()
		printErr(env, name, err)
		return ExitFail
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		st.clear()
		fmt.Fprintf(env.Stderr, "distpass partition: %v\n", err)
		return ExitFail
	}
	type file struct {
		path  string
		build func() (*ir.Module, error)
	}
	var files []file
	// Empty lists are [] in ranks.json, never null.
	table := sharedTable{Version: 1, Classes: []sharedClass{}, Plain: map[string]string{}}
	for k, c := range cs.Classes {
		if shared && c.Fallback == "" {
			path := "class" + strconv.Itoa(k) + ".dpir"
			files = append(files, file{filepath.Join(dir, path), func() (*ir.Module, error) { return cs.Module(c.Ranks[0]) }})
			sc := sharedClass{File: path, Ranks: c.Ranks, Values: map[string][]any{}}
			sc.Sites = make([]sharedSite, 0, len(c.Sites))
			for _, s := range c.Sites {
				sc.Sites = append(sc.Sites, sharedSite{s.Program, s.OpID, s.Attr, s.Value})
			}
			for i, r := range c.Ranks {
				vs := make([]any, len(c.Values[i]))
				for j, v := range c.Values[i] {
					switch v := v.(type) {
					case ir.Int:
						vs[j] = int64(v)
					case ir.Ints:
						vs[j] = []int64(v)
					default:
						st.clear()
						fmt.Fprintf(env.Stderr, "distpass partition: rank %d: a %s value in ranks.json\n", r, v.Kind())
						return ExitFail
					}
				}
				sc.Values[strconv.Itoa(r)] = vs
			}
			table.Classes = append(table.Classes, sc)
			continue
		}
		for _, r := range c.Ranks {
			path := "rank" + strconv.Itoa(r) + ".dpir"
			if pdmodel {
				path = "rank" + strconv.Itoa(r)
			}
			files = append(files, file{filepath.Join(dir, path), func() (*ir.Module, error) { return cs.Module(r) }})
			if shared {
				table.Plain[strconv.Itoa(r)] = path
			}
		}
	}
	errs := make([]error, len(files))
	var mu sync.Mutex // orders the progress lines
	done := 0
	par.Do(len(files), 0, func(i int) {
		pm, err := files[i].build()
		if err == nil {
			err = verifyRank(pm)
		}
		switch {
		case err == nil && pdmodel:
			err = writePaddleRank(files[i].path, pm, endpoint)
		case err == nil:
			err = writeModule(env, files[i].path, pm)
		}
		errs[i] = err
		mu.Lock()
		done++
		st.show("partition: wrote %d/%d files", done, len(files))
		mu.Unlock()
	})
	st.clear()
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(env.Stderr, "distpass partition: %v\n", err)
		return ExitFail
	}
	if shared {
		data, err := json.MarshalIndent(table, "", "  ")
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "ranks.json"), append(data, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "distpass partition: %v\n", err)
			return ExitFail
		}
	}
	return ExitOK
}

// writePaddleRank writes a rank's module as base.pdmodel,
// base.startup.pdmodel (when it has a startup program) and the sidecar
// base.json, its startup program creating the communicators its programs
// use first (paddle.AddCommSetup), endpoint giving each rank's host:port.
func writePaddleRank(base string, pm *ir.Module, endpoint func(rank int) (string, error)) error {
	if err := paddle.AddCommSetup(pm, endpoint); err != nil {
		return err
	}
	f, err := paddle.ExportFiles(pm, paddle.ExportOptions{Sidecar: true, Startup: pm.Startup != nil})
	if err != nil {
		return fmt.Errorf("rank %d: %v", pm.Main.Rank, err)
	}
	for _, w := range []struct {
		ext  string
		data []byte
	}{{".pdmodel", f.Main}, {".startup.pdmodel", f.Startup}, {".json", f.Sidecar}} {
		if w.data == nil {
			continue
		}
		if err := os.WriteFile(base+w.ext, w.data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// The ranks.json of partition -all -shared.
type sharedTable struct {
	Version int               `json:"version"`
	Classes []sharedClass     `json:"classes"`
	Plain   map[string]string `json:"plain"`
}

type sharedClass struct {
	File   string           `json:"file"`
	Ranks  []int            `json:"ranks"`
	Sites  []sharedSite     `json:"sites"`
	Values map[string][]any `json:"values"` // an int, or a list (shard_offset)
}

type sharedSite struct {
	Program string `json:"program"`
	Op      int64  `json:"op"`
	Attr    string `json:"attr"`
	Value   int    `json:"value"` // index into the rank's values
}
