package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/internal/par"
	"github.com/distpass/distpass/internal/suggest"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/passes"
)

const explainArgs = "[-rank R | -all] [-json] [-measure] [-memory] [FILE|-]\n       distpass explain -reshards [-json] [FILE|-]\n       distpass explain -sharding VAR [-json] [FILE|-]"

// explainDoc is explain's help: what it prints, the cost formulas and the
// JSON schema.
const explainDoc = `Explain lists the collectives of each rank's program, and the all-reduce
inside each sync_batch_norm and its grad — why each is there (its
origin: the impl that inserted it and its reason) and what it costs —
then totals per mesh axis and per collective type: main per training
step, startup once. The input is an annotated serial module, partitioned
here for rank 0 (the lowest rank), -rank R or -all ranks, or a module
already partitioned, explained as it is.

Columns: op id (and ^B for an op in block B > 0), type, axis (the mesh dim
whose group for this rank is the op's group; "world" for every rank;
"group N" otherwise), group (its ranks), the payload's dtype and local
shape (the X input, Out for recv_v2, the statistics buffer of a
sync_batch_norm), the bytes this rank moves, and the origin ("serial
op, impl T:N" for a collective of the serial program, kept and pointed
at its group by impl T:N).

Bytes per run of an op, with n the group size and size the payload's
local bytes, rounded half up to whole bytes, op by op (totals add up):
  c_allreduce_*, all_reduce          2(n-1)/n × size(X)
  c_allgather, all_gather, c_concat  (n-1)/n × size(Out)
  c_reducescatter, reduce_scatter    (n-1)/n × size(X)
  alltoall, all_to_all               (n-1)/n × size(X)
  c_broadcast, broadcast             (n-1)/n × size(X)  (the ring algorithm)
  send_v2 / recv_v2                  size(X) / size(Out)
  c_identity, c_split                0 (local)
  global_scatter, global_gather      data-dependent: the rows are decided
                                     by the routing at run time
  sync_batch_norm(_grad)             2(n-1)/n × (2C+1) × 4 (8 for an f64
                                     X): the all-reduce inside the op of
                                     the per-channel sums and the element
                                     count, C channels (the Scale input);
                                     0 with running statistics (is_test)
The other collective types are in the doc of package analysis. A group
of one rank moves 0. -measure runs one training step of the
serial module in the simulator (startup, then one step of main, fed as
'distpass check' feeds it) and adds the bytes each op moved: the same
formulas on the actual tensors, and for global_scatter/global_gather the
rows sent to other ranks × columns × dtype size (rows a rank keeps are
free). A sync_batch_norm's all-reduce runs inside its kernel, out of the
simulator's sight of its tensors: each run counts the static figure.

-memory adds the local bytes of main's vars: parameters, other
persistables, and activations (every non-persistable var at once, grads
and temporaries included: an upper bound, not a peak); vars with a dim
of -1 are left out and counted. Then the most bytes of activations live
at once as main's global block runs, and the op where they are: each
from its first op to its last (a fed one from the start), a
sub-block's while its op runs.

-json prints one JSON document instead:
  {"file": NAME, "measured": BOOL, "ranks": [RANK...]}
  RANK:  {"rank": R, "collectives": [OP...], "totals": [TOTALS...],
          "measured_totals": [TOTALS...] (with -measure),
          "memory": MEMORY (with -memory)}
  OP:    {"program": "main"|"startup", "block": B, "op": ID, "type": T,
          "ring_id": N (-1: none), "group": [R...], "axis": A,
          "payload": VAR ("" for none, or a sync_batch_norm's statistics),
          "dtype": D, "shape": [N...], "bytes": N|null
          (null when data-dependent), "data_dependent": BOOL,
          "measured_bytes": N (with -measure, if the op ran),
          "origin": S ("" for a serial op), "impl": "T:N" ("" for none)}
  TOTALS: {"program": P, "per": "step"|"once", "ops": N, "bytes": N,
          "data_dependent": N, "by_axis": [SUM...], "by_type": [SUM...]}
  SUM:   {"name": S, "ops": N, "bytes": N, "data_dependent": N}
  MEMORY: {"params": CLASS, "persistables": CLASS, "activations": CLASS,
          "total_bytes": N, "peak_activation_bytes": N, "peak_op": ID},
          CLASS: {"vars": N, "bytes": N, "unknown": N}
Ranks come in ascending order, ops in program order (main, then startup),
sums sorted by name.

-reshards lists the reshard ops of a serial module instead (make them
with 'distpass run -pipeline insert-reshards'), partitioned for every
rank: for each, its source and destination dists, its origin (which op
needed what), and rank by rank the ops it became and the bytes the rank
moves for one run (ranks that lower it alike share a line), then the
totals. With -json, one document:
  {"file": NAME, "reshards": [{"op": ID, "block": B, "x": VAR,
   "out": VAR, "from": DIST, "to": DIST, "origin": S, "bytes": N,
   "ranks": [{"rank": R, "ops": [T...], "bytes": N}...]}...]}
where DIST is the var's dist as the text format spells it. -reshards
takes none of -rank, -all, -measure and -memory.

-sharding VAR explains completion instead: it completes the module (a
serial one, partly annotated: see 'distpass complete') and prints, for
each dim of VAR, where its sharding came from: the annotation its mesh
dim started at ("var x", or "op N TYPE" for an annotated op) and every
op it flowed through, first hop first:
  var l0_fc1_mm : f32[4, 8, 256] @world[0, -1, 1]  # completed
  ...
  l0_fc1_mm dim 2: split along mesh dim 1 (mp), from var l0_fc1_w
    op 44 matmul_v2: l0_fc1_w dim 1 -> l0_fc1_mm dim 2
The first line is VAR as the completed module declares it, "annotated"
if the input gave its dist, "completed" if not; a replicated dim says
so. With -json, one document, an entry of the origins of 'distpass
complete -report -json':
  {"var": V, "dims": [{"dim", "mesh_dim", "annotation",
   "hops": [{"op", "op_type", "from", "from_dim", "to", "to_dim"}...]}...]}
-sharding takes none of -rank, -all, -measure and -memory.

Errors: a parse error is file:line:col: message; a program's is
"rank R: op N TYPE: message". Exit codes: 0 ok, 1 bad input, 2 usage.`

func runExplain(env *Env, args []string) int {
	fs := newFlagSet(env, "explain", explainArgs, explainDoc)
	rankFlag := rangeInt(fs, "rank", 0, 0, math.MaxInt, "explain rank `R` (default: the lowest rank of the module's meshes)")
	all := fs.Bool("all", false, "explain every rank")
	asJSON := fs.Bool("json", false, "print one JSON document (schema above)")
	measure := fs.Bool("measure", false, "run one simulated training step and add the bytes each collective moved")
	memory := fs.Bool("memory", false, "add the memory summary of each rank")
	sharding := fs.String("sharding", "", "complete the module and explain where each dim of `VAR`'s sharding came from")
	reshards := fs.Bool("reshards", false, "list every reshard op: its dists, its origin, and what it became on each rank")
	files, code, ok := parseFlagsAnywhere(env, fs, args)
	if !ok {
		return code
	}
	usageErr := func(msg string) int {
		fmt.Fprintf(env.Stderr, "distpass explain: %s\nusage: distpass explain %s\n", msg, explainArgs)
		return ExitUsage
	}
	rankGiven, rank := rankFlag.set, &rankFlag.v
	if given := setFlags(fs); slices.Contains(given, "reshards") && *reshards {
		var others []string
		for _, f := range []string{"rank", "all", "measure", "memory", "sharding"} {
			if slices.Contains(given, f) {
				others = append(others, "-"+f)
			}
		}
		switch {
		case len(others) > 0:
			return usageErr("-reshards explains every rank's reshards: it takes no " + strings.Join(others, ", "))
		case len(files) > 1:
			return usageErr("one FILE at most")
		}
		return explainReshards(env, files, *asJSON)
	}
	if given := setFlags(fs); slices.Contains(given, "sharding") {
		var others []string
		for _, f := range []string{"rank", "all", "measure", "memory"} {
			if slices.Contains(given, f) {
				others = append(others, "-"+f)
			}
		}
		switch {
		case len(others) > 0:
			return usageErr("-sharding VAR explains completion, not collectives: it takes no " + strings.Join(others, ", "))
		case *sharding == "":
			return usageErr("-sharding wants a var name")
		case len(files) > 1:
			return usageErr("one FILE at most")
		}
		return explainSharding(env, files, *sharding, *asJSON)
	}
	switch {
	case rankGiven && *all:
		return usageErr("give at most one of -rank R and -all")
	case len(files) > 1:
		return usageErr("one FILE at most")
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(env.Stderr, format+"\n", a...)
		return ExitFail
	}
	in, m, code, ok := loadOne(env, "explain", files)
	if !ok {
		return code
	}
	if m.Main == nil {
		return fail("%s: no main program", in.name)
	}

	var results []*explained
	if m.Main.Rank >= 0 {
		// Already partitioned: explain it as it is.
		if rankGiven && *rank != m.Main.Rank {
			return fail("%s: the module is partitioned for rank %d, not %d", in.name, m.Main.Rank, *rank)
		}
		if *measure {
			return fail("%s: -measure runs the serial module, and this one is partitioned for rank %d", in.name, m.Main.Rank)
		}
		results = []*explained{explainModule(m.Main.Rank, m)}
	} else {
		ranks := passes.Ranks(m)
		if len(ranks) == 0 {
			return fail("%s: the module has no mesh, so no ranks", in.name)
		}
		want := ranks[:1]
		switch {
		case *all:
			want = ranks
		case rankGiven:
			if err := passes.CheckRank(m, *rank); err != nil {
				return fail("%s: %v", in.name, err)
			}
			want = []int{*rank}
		}
		results = partitionAndExplain(m, want)
	}
	for _, r := range results {
		if r.err != nil {
			for _, line := range errorLines(r.err) {
				fmt.Fprintf(env.Stderr, "%s: rank %d: %s\n", in.name, r.rank, line)
			}
			return ExitFail
		}
	}

	var traffic *check.Traffic
	var err error
	if *measure {
		traffic, err = check.MeasureTraffic(context.Background(), m, check.Options{})
		if err != nil {
			for _, line := range errorLines(err) {
				fmt.Fprintf(env.Stderr, "%s: measure: %s\n", in.name, line)
			}
			return ExitFail
		}
	}
	if *asJSON {
		err = writeExplainJSON(env.Stdout, in.name, results, traffic, *memory)
	} else {
		err = writeExplainText(env.Stdout, results, traffic, *memory)
	}
	if err != nil {
		return fail("distpass explain: %v", err)
	}
	return ExitOK
}

// setFlags returns the names of the flags of fs that were set.
func setFlags(fs *flag.FlagSet) []string {
	var out []string
	fs.Visit(func(f *flag.Flag) { out = append(out, f.Name) })
	return out
}

// explainSharding completes the module of files and prints the origin of
// each dim of var name's sharding (complete.Report.Explain, or its
// Origin as JSON).
func explainSharding(env *Env, files []string, name string, asJSON bool) int {
	in, m, code, ok := loadOne(env, "explain", files)
	if !ok {
		return code
	}
	if m.Main == nil {
		fmt.Fprintf(env.Stderr, "%s: no main program\n", in.name)
		return ExitFail
	}
	if m.Main.Rank >= 0 {
		fmt.Fprintf(env.Stderr, "%s: -sharding completes a serial module, and this one is partitioned for rank %d\n", in.name, m.Main.Rank)
		return ExitFail
	}
	// The var Origin explains: the first of that name in block order.
	var v *ir.Var
	for _, b := range m.Main.Blocks {
		if i := slices.IndexFunc(b.Vars(), func(x *ir.Var) bool { return x.Name() == name && x.Type.IsTensor() }); i >= 0 {
			v = b.Vars()[i]
			break
		}
	}
	annotated := v != nil && v.Dist != nil
	// m is this command's own parse of FILE: completing it in place
	// changes nothing the user holds.
	rep, err := complete.Complete(m, complete.Options{Registry: lower.DefaultRegistry()})
	if err != nil {
		printErr(env, in.name, err)
		return ExitFail
	}
	dims, err := rep.Origin(name)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %s\n", in.name, unknownVar(m, name))
		return ExitFail
	}
	if asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		err = enc.Encode(complete.VarOrigins{Var: name, Dims: dims})
	} else {
		// The var as completed, then a line per dim.
		var text string
		if text, err = rep.Explain(name); err == nil {
			how := "completed"
			if annotated {
				how = "annotated"
			}
			_, err = fmt.Fprintf(env.Stdout, "%s  # %s\n%s", ir.PrintVar(v), how, text)
		}
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "distpass explain: %v\n", err)
		return ExitFail
	}
	return ExitOK
}

// unknownVar says that the main program of m has no dense var name,
// naming the nearest var names (by edit distance) when some are near.
func unknownVar(m *ir.Module, name string) string {
	type cand struct {
		name string
		dist int
	}
	limit := max(2, len(name)/3)
	var cs []cand
	seen := map[string]bool{}
	for _, b := range m.Main.Blocks {
		for _, v := range b.Vars() {
			n := v.Name()
			if seen[n] || !v.Type.IsTensor() {
				continue
			}
			seen[n] = true
			if k := suggest.Distance(name, n); k <= limit {
				cs = append(cs, cand{n, k})
			}
		}
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.name, b.name)
	})
	msg := "-sharding: no dense-tensor var " + strconv.Quote(name) + " in the main program"
	if len(cs) == 0 {
		return msg
	}
	names := make([]string, 0, 3)
	for _, c := range cs[:min(len(cs), 3)] {
		names = append(names, c.name)
	}
	return msg + "; nearest: " + strings.Join(names, ", ")
}

// explained is one rank's reports, or the error that stopped them.
type explained struct {
	rank int
	comm *analysis.CommReport
	mem  *analysis.MemoryReport
	err  error
}

func explainModule(rank int, m *ir.Module) *explained {
	e := &explained{rank: rank}
	c := analysis.NewCache(m)
	if e.comm, e.err = analysis.Get[*analysis.CommReport](c, analysis.Comm); e.err != nil {
		return e
	}
	e.mem, e.err = analysis.Get[*analysis.MemoryReport](c, analysis.Memory)
	return e
}

// partitionAndExplain partitions a clone of m for each rank and explains
// it, concurrently (at most GOMAXPROCS at once), as passes.PartitionAll
// does; the results come in the order of ranks.
func partitionAndExplain(m *ir.Module, ranks []int) []*explained {
	out := make([]*explained, len(ranks))
	par.Do(len(ranks), 0, func(i int) {
		c := m.Clone() // reads m only
		if err := passes.Partition(c, lower.DefaultRegistry(), ranks[i]); err != nil {
			out[i] = &explained{rank: ranks[i], err: err}
			return
		}
		out[i] = explainModule(ranks[i], c)
	})
	return out
}

// errorLines spells err one problem a line: each analysis.CommError of a
// joined error on its own ("op N TYPE: …"), other errors line by line.
func errorLines(err error) []string {
	var ops []string
	for _, e := range analysis.CommErrors(err) {
		ops = append(ops, e.Error())
	}
	if len(ops) > 0 {
		return ops
	}
	return strings.Split(err.Error(), "\n")
}

// measuredOps returns ops with each op's measured bytes in place of its
// figure, and an op that never ran as data-dependent (no figure).
func measuredOps(rank int, ops []analysis.CommOp, tr *check.Traffic) []analysis.CommOp {
	out := slices.Clone(ops)
	for i := range out {
		b, ok := tr.Bytes(rank, out[i].ID)
		out[i].Bytes, out[i].DataDependent = b, !ok
	}
	return out
}

// ---- text ----

func writeExplainText(w io.Writer, results []*explained, tr *check.Traffic, memory bool) error {
	var sb strings.Builder
	for i, r := range results {
		if i > 0 {
			sb.WriteByte('\n')
		}
		fmt.Fprintf(&sb, "rank %d\n", r.rank)
		var measured []analysis.CommOp
		if tr != nil {
			measured = measuredOps(r.rank, r.comm.Ops, tr)
		}
		for _, prog := range []struct {
			tot       analysis.CommTotals
			per, unit string
		}{{r.comm.Main, "per step", "bytes/step"}, {r.comm.Startup, "once", "bytes"}} {
			writeProgramText(&sb, r.comm, measured, prog.tot, prog.per, prog.unit)
		}
		if memory {
			writeMemoryText(&sb, r.mem)
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func writeProgramText(sb *strings.Builder, rep *analysis.CommReport, measured []analysis.CommOp, tot analysis.CommTotals, per, unit string) {
	name := tot.Program
	fmt.Fprintf(sb, "\n%s: %s, %s\n", name, plural(tot.Ops, "collective"), per)
	if tot.Ops == 0 {
		return
	}
	head := []string{"op", "type", "axis", "group", "dtype", "shape", unit}
	if measured != nil {
		head = append(head, "measured")
	}
	head = append(head, "origin")
	rows := [][]string{head}
	for i, op := range rep.Ops {
		if op.Program != name {
			continue
		}
		id := strconv.FormatInt(op.ID, 10)
		if op.Block > 0 {
			id += " ^" + strconv.Itoa(op.Block)
		}
		dtype, shape := "-", "-"
		if hasBuffer(op) {
			dtype, shape = op.DType.String(), formatShape(op.Shape)
		}
		row := []string{id, op.Type, op.Axis, ir.FormatInts(op.Group), dtype, shape, opBytes(op)}
		if measured != nil {
			row = append(row, opBytes(measured[i]))
		}
		origin := op.Origin
		if origin == "" {
			origin = "serial op"
			if op.Impl != "" {
				origin += ", impl " + op.Impl
			}
		}
		rows = append(rows, append(row, origin))
	}
	writeTable(sb, rows)

	var mtot analysis.CommTotals
	if measured != nil {
		mtot = analysis.SumComm(name, measured)
	}
	for _, by := range []struct {
		head       string
		sums, msum []analysis.CommTotal
	}{{"axis", tot.ByAxis, mtot.ByAxis}, {"type", tot.ByType, mtot.ByType}} {
		head := []string{"by " + by.head, "ops", unit}
		if measured != nil {
			head = append(head, "measured")
		}
		rows := [][]string{head}
		for j, s := range by.sums {
			row := []string{s.Name, strconv.Itoa(s.Ops), sumBytes(s.Bytes, s.Ops, s.DataDependent)}
			if measured != nil {
				row = append(row, sumBytes(by.msum[j].Bytes, by.msum[j].Ops, by.msum[j].DataDependent))
			}
			rows = append(rows, row)
		}
		row := []string{"total", strconv.Itoa(tot.Ops), sumBytes(tot.Bytes, tot.Ops, tot.DataDependent)}
		if measured != nil {
			row = append(row, sumBytes(mtot.Bytes, mtot.Ops, mtot.DataDependent))
		}
		rows = append(rows, row)
		sb.WriteByte('\n')
		writeTable(sb, rows)
	}
}

func writeMemoryText(sb *strings.Builder, mem *analysis.MemoryReport) {
	fmt.Fprintf(sb, "\nmemory: local bytes of main's vars\n")
	rows := [][]string{{"class", "vars", "bytes", "unknown size"}}
	for _, c := range []struct {
		name string
		c    analysis.MemoryClass
	}{{"params", mem.Params}, {"persistables", mem.Persistables}, {"activations", mem.Activations}} {
		rows = append(rows, []string{c.name, strconv.Itoa(c.c.Vars), strconv.FormatInt(c.c.Bytes, 10), strconv.Itoa(c.c.Unknown)})
	}
	rows = append(rows, []string{"total",
		strconv.Itoa(mem.Params.Vars + mem.Persistables.Vars + mem.Activations.Vars),
		strconv.FormatInt(mem.Total(), 10),
		strconv.Itoa(mem.Params.Unknown + mem.Persistables.Unknown + mem.Activations.Unknown)})
	writeTable(sb, rows)
	if mem.PeakOp != 0 {
		fmt.Fprintf(sb, "activations live at once: at most %d bytes (at op %d)\n", mem.PeakActivations, mem.PeakOp)
	}
}

// hasBuffer reports whether op sends something: a payload var, or a
// sync_batch_norm's statistics, which are no var but have a dtype.
func hasBuffer(op analysis.CommOp) bool { return op.Payload != "" || op.DType.Valid() }

func opBytes(op analysis.CommOp) string {
	if op.DataDependent {
		return "data-dependent"
	}
	return strconv.FormatInt(op.Bytes, 10)
}

func sumBytes(b int64, ops, dataDependent int) string {
	if dataDependent > 0 && dataDependent == ops {
		return "data-dependent"
	}
	s := strconv.FormatInt(b, 10)
	if dataDependent > 0 {
		s += " + " + strconv.Itoa(dataDependent) + " data-dependent"
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func formatShape(s []int64) string {
	xs := make([]int, len(s))
	for i, d := range s {
		xs[i] = int(d)
	}
	return ir.FormatInts(xs)
}

// writeTable writes rows indented by two spaces, in columns two spaces
// apart.
func writeTable(sb *strings.Builder, rows [][]string) {
	tw := tabwriter.NewWriter(sb, 0, 0, 2, ' ', 0)
	for _, row := range rows {
		fmt.Fprintf(tw, "  %s\n", strings.Join(row, "\t"))
	}
	tw.Flush()
}

// ---- JSON ----

type jsonExplain struct {
	File     string     `json:"file"`
	Measured bool       `json:"measured"`
	Ranks    []jsonRank `json:"ranks"`
}

type jsonRank struct {
	Rank           int          `json:"rank"`
	Collectives    []jsonOp     `json:"collectives"`
	Totals         []jsonTotals `json:"totals"`
	MeasuredTotals []jsonTotals `json:"measured_totals,omitempty"`
	Memory         *jsonMemory  `json:"memory,omitempty"`
}

type jsonOp struct {
	Program       string  `json:"program"`
	Block         int     `json:"block"`
	Op            int64   `json:"op"`
	Type          string  `json:"type"`
	RingID        int64   `json:"ring_id"`
	Group         []int   `json:"group"`
	Axis          string  `json:"axis"`
	Payload       string  `json:"payload"`
	DType         string  `json:"dtype"`
	Shape         []int64 `json:"shape"`
	Bytes         *int64  `json:"bytes"`
	DataDependent bool    `json:"data_dependent"`
	MeasuredBytes *int64  `json:"measured_bytes,omitempty"`
	Origin        string  `json:"origin"`
	Impl          string  `json:"impl"`
}

type jsonTotals struct {
	Program       string    `json:"program"`
	Per           string    `json:"per"`
	Ops           int       `json:"ops"`
	Bytes         int64     `json:"bytes"`
	DataDependent int       `json:"data_dependent"`
	ByAxis        []jsonSum `json:"by_axis"`
	ByType        []jsonSum `json:"by_type"`
}

type jsonSum struct {
	Name          string `json:"name"`
	Ops           int    `json:"ops"`
	Bytes         int64  `json:"bytes"`
	DataDependent int    `json:"data_dependent"`
}

type jsonMemory struct {
	Params          jsonClass `json:"params"`
	Persistables    jsonClass `json:"persistables"`
	Activations     jsonClass `json:"activations"`
	TotalBytes      int64     `json:"total_bytes"`
	PeakActivations int64     `json:"peak_activation_bytes"`
	PeakOp          int64     `json:"peak_op"`
}

type jsonClass struct {
	Vars    int   `json:"vars"`
	Bytes   int64 `json:"bytes"`
	Unknown int   `json:"unknown"`
}

func writeExplainJSON(w io.Writer, file string, results []*explained, tr *check.Traffic, memory bool) error {
	doc := jsonExplain{File: file, Measured: tr != nil, Ranks: []jsonRank{}}
	for _, r := range results {
		jr := jsonRank{Rank: r.rank, Collectives: []jsonOp{}}
		for _, op := range r.comm.Ops {
			jo := jsonOp{Program: op.Program, Block: op.Block, Op: op.ID, Type: op.Type, RingID: op.RingID,
				Group: op.Group, Axis: op.Axis, Payload: op.Payload, Shape: op.Shape,
				DataDependent: op.DataDependent, Origin: op.Origin, Impl: op.Impl}
			if hasBuffer(op) {
				jo.DType = op.DType.String()
			}
			if !op.DataDependent {
				jo.Bytes = &op.Bytes
			}
			if tr != nil {
				if b, ok := tr.Bytes(r.rank, op.ID); ok {
					jo.MeasuredBytes = &b
				}
			}
			jr.Collectives = append(jr.Collectives, jo)
		}
		jr.Totals = []jsonTotals{jsonTotal(r.comm.Main, "step"), jsonTotal(r.comm.Startup, "once")}
		if tr != nil {
			ms := measuredOps(r.rank, r.comm.Ops, tr)
			jr.MeasuredTotals = []jsonTotals{jsonTotal(analysis.SumComm("main", ms), "step"),
				jsonTotal(analysis.SumComm("startup", ms), "once")}
		}
		if memory {
			c := func(m analysis.MemoryClass) jsonClass { return jsonClass{m.Vars, m.Bytes, m.Unknown} }
			jr.Memory = &jsonMemory{c(r.mem.Params), c(r.mem.Persistables), c(r.mem.Activations), r.mem.Total(),
				r.mem.PeakActivations, r.mem.PeakOp}
		}
		doc.Ranks = append(doc.Ranks, jr)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

func jsonTotal(t analysis.CommTotals, per string) jsonTotals {
	sums := func(ts []analysis.CommTotal) []jsonSum {
		out := []jsonSum{}
		for _, s := range ts {
			out = append(out, jsonSum{s.Name, s.Ops, s.Bytes, s.DataDependent})
		}
		return out
	}
	return jsonTotals{Program: t.Program, Per: per, Ops: t.Ops, Bytes: t.Bytes, DataDependent: t.DataDependent,
		ByAxis: sums(t.ByAxis), ByType: sums(t.ByType)}
}
