package passes_test

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
)

// FuzzParsePipeline feeds arbitrary text to the pipeline parser. It must
// never panic; an error is a *passes.PipelineError whose column lies in
// the text (or just past its end); and whatever parses prints to text
// that parses to the same steps with the same option values, and prints
// to the same text again.
func FuzzParsePipeline(f *testing.F) {
	for _, s := range []string{
		"verify",
		"verify,dce,verify",
		"dce{keep=loss},canonicalize-names",
		`nop{n=3,flag=true,ratio=1e-3,name="a, b}"}`,
		"nop{name=x.tmp_0@GRAD}",
		"repeat{count=2}(dce,verify)",
		"repeat(repeat{count=3}(nop{n=-1}),verify),verify",
		" dce { keep = a } , nop{ name=z, n=2 } ",
		"check-annotations,partition{rank=3},verify",
		"append-optimizer{type=adam,lr=0.001},collective-dialect{style=pir}",
		"annotate-data-parallel{shape=4},partition{rank=1}",
		`nop{name="\x00\u00e9\"\\"}`,
		"nop{ratio=NaN,n=-9223372036854775808}",
		"nop{}",
		"nop{n=1",
		"repeat(dce",
		"verify)",
		"canonicalize-names,dce",
		"repeat(canonicalize-names),repeat(dce)",
	} {
		f.Add(s)
	}
	r := testRegistry(f, noop("nop"))
	f.Fuzz(func(t *testing.T, text string) {
		pl, err := r.Parse(text)
		if err != nil {
			pe, ok := err.(*passes.PipelineError)
			if !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			if pe.Col < 1 || pe.Col > len(text)+1 {
				t.Fatalf("error column %d outside the text of %d bytes: %v", pe.Col, len(text), err)
			}
			if pe.Msg == "" {
				t.Fatalf("error without a message: %v", err)
			}
			return
		}
		printed := pl.String()
		pl2, err := r.Parse(printed)
		if err != nil {
			t.Fatalf("printed pipeline %q does not parse: %v", printed, err)
		}
		if again := pl2.String(); again != printed {
			t.Fatalf("printing is not a fixed point: %q then %q", printed, again)
		}
		if d := pipelineDiff(pl, pl2, ""); d != "" {
			t.Fatalf("%q re-parsed from %q differs: %s", printed, text, d)
		}
	})
}

// pipelineDiff compares two pipelines step by step: the same passes, the
// same nesting and the same value of every option (given or default).
func pipelineDiff(a, b *passes.Pipeline, at string) string {
	if len(a.Steps) != len(b.Steps) {
		return at + ": " + strconv.Itoa(len(a.Steps)) + " steps, then " + strconv.Itoa(len(b.Steps))
	}
	for i, sa := range a.Steps {
		sb := b.Steps[i]
		where := at + "/" + strconv.Itoa(i)
		if sa.Pass != sb.Pass {
			return where + ": pass " + sa.Pass.Name + ", then " + sb.Pass.Name
		}
		if sa.Label() != sb.Label() {
			return where + ": label " + sa.Label() + ", then " + sb.Label()
		}
		ca, cb := &passes.Context{Step: sa}, &passes.Context{Step: sb}
		for _, o := range sa.Pass.Options {
			same := true
			switch o.Kind {
			case passes.OptInt:
				same = ca.Int(o.Name) == cb.Int(o.Name)
			case passes.OptBool:
				same = ca.Bool(o.Name) == cb.Bool(o.Name)
			case passes.OptFloat:
				same = math.Float64bits(ca.Float(o.Name)) == math.Float64bits(cb.Float(o.Name))
			case passes.OptString:
				same = ca.String(o.Name) == cb.String(o.Name)
			}
			if !same {
				return where + ": option " + o.Name + " changed value"
			}
		}
		if (sa.Sub == nil) != (sb.Sub == nil) {
			return where + ": sub-pipeline appeared or vanished"
		}
		if sa.Sub != nil {
			if d := pipelineDiff(sa.Sub, sb.Sub, where); d != "" {
				return d
			}
		}
	}
	return ""
}

// Bounds on one FuzzPartition input, so that an execution stays fast.
const (
	fuzzMaxOps   = 2000
	fuzzMaxRanks = 64
)

// fuzzSeed is a module text and where it comes from.
type fuzzSeed struct {
	name string
	src  []byte
}

// partitionSeeds returns module texts to start FuzzPartition from: the
// inputs of the golden cases, the examples, and the example models under
// each strategy they know.
func partitionSeeds(tb testing.TB) []fuzzSeed {
	tb.Helper()
	var seeds []fuzzSeed
	files, err := filepath.Glob(filepath.Join("..", "golden", "testdata", "*.txtar"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range files {
		ar, err := txtar.ParseFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		for _, file := range ar.Files {
			if file.Name == "input.dpir" {
				seeds = append(seeds, fuzzSeed{filepath.Base(f), file.Data})
			}
		}
	}
	examples, err := filepath.Glob(filepath.Join("..", "examples", "*.dpir"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range examples {
		src, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, fuzzSeed{filepath.Base(f), src})
	}
	mesh := func(strategy string, sizes ...int) *ir.ProcessMesh {
		return models.Mesh(sizes, strings.Split(strategy, ","))
	}
	add := func(what string, m *ir.Module, err error) {
		if err != nil {
			tb.Fatalf("%s: %v", what, err)
		}
		seeds = append(seeds, fuzzSeed{what, ir.Print(m)})
	}
	mlp := models.MLPConfig{Layers: 2, Hidden: 8, Batch: 4, DType: ir.F32}
	for _, c := range []struct {
		strategy string
		sizes    []int
	}{{"dp", []int{2}}, {"mp", []int{2}}, {"dp,mp", []int{2, 2}}} {
		m, err := models.MLPTraining(mlp, c.strategy, mesh(c.strategy, c.sizes...), "sgd")
		add("mlp "+c.strategy, m, err)
	}
	// One small layer: the fuzzer's time per input, and above all the
	// minimiser's, grows with the text.
	gpt := models.TinyGPT()
	gpt.Layers, gpt.Hidden, gpt.Heads, gpt.Vocab, gpt.Seq, gpt.Batch = 1, 16, 2, 32, 4, 4
	for _, c := range []struct {
		strategy, optimizer string
		sizes               []int
		moeEvery            int
	}{
		{"dp", "sgd", []int{2}, 0},
		{"mp", "adam", []int{2}, 0},
		{"dp,mp", "sgd", []int{2, 2}, 0},
		{"ep", "sgd", []int{2}, 1},
		{"dp,ep", "momentum", []int{2, 2}, 1},
	} {
		cfg := gpt
		if c.moeEvery > 0 {
			cfg.MoEEvery, cfg.Experts, cfg.TopK = c.moeEvery, 2, 1
		}
		m, err := models.GPTTraining(cfg, c.strategy, mesh(c.strategy, c.sizes...), c.optimizer)
		add("gpt "+c.strategy, m, err)
	}
	for _, c := range []struct {
		strategy string
		sizes    []int
		capacity int
	}{{"ep", []int{2}, 0}, {"ep", []int{4}, 6}, {"dp,ep", []int{2, 2}, 0}} {
		m, err := models.MoETraining(models.MoEConfig{Tokens: 8, Model: 4, Hidden: 8, Experts: 4, TopK: 2, Capacity: c.capacity, DType: ir.F32},
			c.strategy, mesh(c.strategy, c.sizes...), "sgd")
		add("moe "+c.strategy, m, err)
	}
	return seeds
}

// FuzzPartition partitions arbitrary verified modules for every rank.
// Both PartitionAll and PartitionClasses must return one module per rank
// or an error, never panic, and leave the input as it was; when both
// succeed, every rank's module from its class prints to the same bytes
// as its plain lowering.
func FuzzPartition(f *testing.F) {
	for _, s := range partitionSeeds(f) {
		f.Add(s.src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		m, err := ir.Parse("fuzz.dpir", src)
		if err != nil {
			return
		}
		checkPartition(t, m)
	})
}

// checkPartition is the body of the partition fuzz targets: m, when it
// verifies and is within the bounds, is partitioned for every rank by
// PartitionAll and by PartitionClasses, which must return a module per
// rank or an error, leave m as it was, and agree byte for byte, with the
// partition passes run one by one too (for the first rank); every rank's
// module must verify.
func checkPartition(t *testing.T, m *ir.Module) {
	if ir.Verify(m) != nil {
		return
	}
	ops := 0
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			ops += len(b.Ops)
		}
	}
	ranks := passes.Ranks(m)
	if ops > fuzzMaxOps || len(ranks) > fuzzMaxRanks {
		return
	}
	ctx := context.Background()
	before := ir.Print(m)

	plain, perr := passes.PartitionAll(ctx, m, nil)
	if perr == nil && len(plain) != len(ranks) {
		t.Fatalf("PartitionAll returned %d modules for %d ranks", len(plain), len(ranks))
	}
	for i, pm := range plain {
		if pm == nil {
			t.Fatalf("PartitionAll returned no module for rank %d", ranks[i])
		}
		// A rank's program that does not verify is a wrong result, not
		// an error: the partitioner must refuse the input instead.
		if err := ir.Verify(pm); err != nil {
			t.Fatalf("rank %d of PartitionAll does not verify: %v", ranks[i], err)
		}
	}
	if !bytes.Equal(before, ir.Print(m)) {
		t.Fatal("PartitionAll changed its input")
	}
	if perr == nil && len(ranks) > 0 {
		// Partition shares one analysis cache across its steps; the
		// passes one by one compute their own.
		step := m.Clone()
		if err := partitionStepByStep(step, ranks[0]); err != nil {
			t.Fatalf("rank %d: Partition succeeds, the passes one by one fail: %v", ranks[0], err)
		}
		if !bytes.Equal(ir.Print(step), ir.Print(plain[0])) {
			t.Fatalf("rank %d: Partition differs from the passes one by one (-steps +Partition):\n%s", ranks[0], ir.Diff(step, plain[0]))
		}
	}

	cs, cerr := passes.PartitionClasses(ctx, m, nil, nil)
	if !bytes.Equal(before, ir.Print(m)) {
		t.Fatal("PartitionClasses changed its input")
	}
	if cerr != nil {
		if perr == nil {
			// The classes lower a subset of the ranks with the same
			// function, and every rank again on a fallback.
			t.Fatalf("PartitionClasses failed where PartitionAll succeeded: %v", cerr)
		}
		return
	}
	if got := cs.Ranks(); len(got) != len(ranks) {
		t.Fatalf("PartitionClasses covers ranks %v, the module has %v", got, ranks)
	}
	for i, r := range ranks {
		got, err := cs.Module(r)
		if err != nil {
			t.Fatalf("rank %d from its class: %v", r, err)
		}
		if got == nil {
			t.Fatalf("rank %d from its class: no module", r)
		}
		if perr != nil {
			continue
		}
		if !bytes.Equal(ir.Print(got), ir.Print(plain[i])) {
			t.Fatalf("rank %d from its class differs from its plain lowering (-class +plain):\n%s", r, ir.Diff(got, plain[i]))
		}
	}
	if !bytes.Equal(before, ir.Print(m)) {
		t.Fatal("building the ranks' modules changed the input")
	}
}

// FuzzPartitionEdit is FuzzPartition on modules the fuzzer edits in
// their structure rather than their text: a seed module (chosen by the
// first argument) and edits, 4 bytes each, that change the annotations
// (dims_mappings, partial dims, meshes of vars and ops, impls, the order
// and shape of a mesh), roles, recompute flags, rank-dependent attrs,
// or drop an op. Byte mutations of module text mostly stop at the
// parser; these keep most inputs well formed, so the time goes to the
// partitioner. The checks are FuzzPartition's.
func FuzzPartitionEdit(f *testing.F) {
	var seeds []*ir.Module
	for _, s := range partitionSeeds(f) {
		m, err := ir.Parse(s.name, s.src)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, m)
	}
	for i := range seeds {
		f.Add(uint8(i), []byte{})
		f.Add(uint8(i), []byte{0, byte(i), 0, 1, 2, byte(i), 1, 2})
		f.Add(uint8(i), []byte{3, 0, 0, 1, 1, byte(i), 0, 1})
	}
	f.Fuzz(func(t *testing.T, seed uint8, edits []byte) {
		m := seeds[int(seed)%len(seeds)].Clone()
		editModule(m, edits)
		checkPartition(t, m)
	})
}

// editModule applies edits to m, 4 bytes (kind, a, b, c) each, at most
// 16 of them; an edit that does not apply is skipped.
func editModule(m *ir.Module, edits []byte) {
	var vars []*ir.Var
	var ops []*ir.Op
	var blocks []*ir.Block // the block of each op
	implTypes := []string{"default"}
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			for _, v := range b.Vars() {
				if v.Dist != nil {
					vars = append(vars, v)
				}
			}
			for _, op := range b.Ops {
				ops = append(ops, op)
				blocks = append(blocks, b)
				if op.Dist != nil && !slices.Contains(implTypes, op.Dist.ImplType) {
					implTypes = append(implTypes, op.Dist.ImplType)
				}
			}
		}
	}
	roles := []ir.Role{ir.RoleForward, ir.RoleBackward, ir.RoleOptimize, ir.RoleForward | ir.RoleLoss,
		ir.RoleBackward | ir.RoleLoss, ir.RoleOptimize | ir.RoleLRSched}
	meshDims := func(name string) int {
		if pm := m.Mesh(name); pm != nil {
			return len(pm.Shape)
		}
		return 0
	}
	for n := 0; n+4 <= len(edits) && n < 16*4; n += 4 {
		kind, a, b, c := edits[n]%12, int(edits[n+1]), int(edits[n+2]), int(edits[n+3])
		switch {
		case kind == 0 && len(vars) > 0: // a var's mapping entry
			v := vars[a%len(vars)]
			if dm := v.Dist.DimsMapping; len(dm) > 0 {
				dm[b%len(dm)] = c%(meshDims(v.Dist.Mesh)+1) - 1
			}
		case kind == 1 && len(ops) > 0: // an op arg's mapping entry
			d := ops[a%len(ops)].Dist
			if d == nil {
				continue
			}
			args := append(slices.Clone(d.Inputs), d.Outputs...)
			if len(args) == 0 {
				continue
			}
			if dm := args[b%len(args)].DimsMapping; len(dm) > 0 {
				dm[(c>>4)%len(dm)] = (c&15)%(meshDims(d.Mesh)+1) - 1
			}
		case kind == 2 && len(ops) > 0: // an op's impl
			op := ops[a%len(ops)]
			if op.Dist != nil {
				types := append(slices.Clone(implTypes), op.Type)
				op.Dist.ImplType, op.Dist.ImplIndex = types[b%len(types)], c%4
			}
		case kind == 3 && len(m.Meshes) > 0: // swap two ranks of a mesh
			ids := m.Meshes[a%len(m.Meshes)].ProcessIDs
			i, j := b%len(ids), c%len(ids)
			ids[i], ids[j] = ids[j], ids[i]
		case kind == 4 && len(m.Meshes) > 0: // another 2-D shape for a mesh
			pm := m.Meshes[a%len(m.Meshes)]
			if n := len(pm.ProcessIDs); len(pm.Shape) == 2 && n%(b%n+1) == 0 {
				pm.Shape[0], pm.Shape[1] = b%n+1, n/(b%n+1)
			}
		case kind == 5 && len(ops) > 0: // an op's role
			ops[a%len(ops)].Role = roles[b%len(roles)]
		case kind == 6 && len(ops) > 0: // recompute
			if d := ops[a%len(ops)].Dist; d != nil {
				d.Recompute = !d.Recompute
			}
		case kind == 7 && len(ops) > 0: // a rank-dependent attr, as written
			op := ops[a%len(ops)]
			if b%2 == 0 {
				op.Attrs.Set("ring_id", ir.Int(int64(c%8)))
			} else {
				op.Attrs.Set("start_index", ir.Int(int64(c)))
			}
		case kind == 8 && len(ops) > 0: // drop an op
			i := a % len(ops)
			blk, op := blocks[i], ops[i]
			if k := slices.Index(blk.Ops, op); k >= 0 {
				blk.Ops = slices.Delete(blk.Ops, k, k+1)
			}
		case kind == 9 && len(vars) > 0: // partial dims of a var
			v := vars[a%len(vars)]
			if nd := meshDims(v.Dist.Mesh); b%2 == 0 || nd == 0 {
				v.Dist.Partial = nil
			} else {
				v.Dist.Partial = []ir.Partial{{Dim: c % nd, Reduce: ir.Reduce(c / nd % 4)}}
			}
		case kind == 10 && len(ops) > 0 && len(m.Meshes) > 0: // an op's mesh
			if d := ops[a%len(ops)].Dist; d != nil {
				d.Mesh = m.Meshes[b%len(m.Meshes)].Name
			}
		case kind == 11 && len(vars) > 0 && len(m.Meshes) > 0: // a var's mesh
			vars[a%len(vars)].Dist.Mesh = m.Meshes[b%len(m.Meshes)].Name
		}
	}
}

// The seeds of FuzzPartition are worth fuzzing from: each parses, and
// all but the golden error cases verify within the bounds and partition,
// except the examples that are not for partition-all (pp_mlp's stages
// put some ops on meshes without rank 0; while_loop has no mesh;
// gpt_bare and the golden insert_reshards, inputs of complete, have most
// vars without a dist), which still verify.
func TestFuzzPartitionSeeds(t *testing.T) {
	seeds := partitionSeeds(t)
	if len(seeds) < 30 {
		t.Fatalf("only %d seeds", len(seeds))
	}
	for _, s := range seeds {
		m, err := ir.Parse(s.name, s.src)
		if err != nil {
			t.Errorf("%s does not parse: %v", s.name, err)
			continue
		}
		if strings.HasPrefix(s.name, "err_") {
			continue
		}
		if err := ir.Verify(m); err != nil {
			t.Errorf("%s does not verify: %v", s.name, err)
			continue
		}
		if n := len(passes.Ranks(m)); n > fuzzMaxRanks {
			t.Errorf("%s has %d ranks", s.name, n)
		}
		_, err = passes.PartitionAll(context.Background(), m, nil)
		if notPartitioned := s.name == "pp_mlp.dpir" || s.name == "while_loop.dpir" || s.name == "gpt_bare.dpir" || s.name == "insert_reshards.txtar"; (err == nil) == notPartitioned {
			t.Errorf("%s: partition error %v", s.name, err)
		}
	}
}

// partitionStepByStep runs the partition passes one by one through their
// exported entry points, as a pipeline of the single passes does.
func partitionStepByStep(m *ir.Module, rank int) error {
	if err := passes.PartitionVars(m, rank); err != nil {
		return err
	}
	for _, ph := range []lower.Phase{lower.ForwardPhase, lower.BackwardPhase, lower.OptimizerPhase} {
		if _, err := (*lower.Registry)(nil).Lower(m, ph); err != nil {
			return err
		}
	}
	if err := passes.RelinkBlockAttrs(m); err != nil {
		return err
	}
	return passes.RemapParamsGrads(m)
}
