package ir

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// verifyBase returns a module that verifies clean and exercises every
// rule's allowances: a 2x2 mesh MLP with feed and fetch, a forward
// in-place batch_norm on a persistable, a loss op and its grad seed, grad
// ops with fwd, an lrsched op and an sgd op writing persistables, a while
// loop whose body (block 1) updates its counter in place and whose nested
// conditional body (block 2) writes a loop-carried var, a grad block
// (block 3) whose op's fwd names an op of block 1, and a startup program
// of initializers.
//
// Op ids, as the builder hands them out:
//
//	main block 0: 1 feed, 2 matmul_v2, 3 batch_norm, 4 relu, 5 mean,
//	  6 fill_any_like, 7 mean_grad, 8 relu_grad, 9 batch_norm_grad,
//	  10 matmul_v2_grad, 11 scale, 12 sgd, 13 assign_value, 14 fill_constant,
//	  15 less_than, 21 while, 23 while_grad, 24 fetch
//	main block 1: 16 increment, 17 less_than, 18 conditional_block
//	main block 2: 19 cast, 20 assign
//	main block 3: 22 fill_constant
//	startup block 0: 25 uniform_random, 26-29 fill_constant
func verifyBase() *Module {
	m := NewModule("mlp")
	bl := NewBuilder(m)
	bl.Mesh("world", []int{2, 2}, []string{"dp", "mp"}, []int{0, 1, 2, 3})
	bl.Mesh("aux", []int{2}, []string{"x"}, []int{4, 5})
	m.Groups = []Group{{ID: 0, Ranks: []int{0, 1, 2, 3}}, {ID: 1, Ranks: []int{0, 1}}, {ID: 2, Ranks: []int{2, 3}}}

	bl.Persist("feed", NoShape(FeedList))
	bl.Persist("fetch", NoShape(FetchList))
	bl.Var("x", Tensor(F32, 8, 16)).WithDist("world", 0, -1).WithFlags(FlagIsData | FlagStopGradient)
	bl.Param("w1", Tensor(F32, 16, 32)).WithDist("world", -1, 1).WithFlags(FlagTrainable)
	bl.Var("h", Tensor(F32, 8, 32)).WithDist("world", 0, 1)
	bl.Persist("rm", Tensor(F32, 32)).WithDist("world", 1)
	bl.Var("hn", Tensor(F32, 8, 32)).WithDist("world", 0, 1)
	bl.Var("r", Tensor(F32, 8, 32)).WithDist("world", 0, 1)
	bl.Var("loss", Tensor(F32)).WithDist("world").WithPartial(0, ReduceAvg)
	bl.Var("loss@GRAD", Tensor(F32)).WithDist("world")
	bl.Var("r@GRAD", Tensor(F32, 8, 32)).WithDist("world", 0, 1)
	bl.Var("hn@GRAD", Tensor(F32, 8, 32)).WithDist("world", 0, 1)
	bl.Var("h@GRAD", Tensor(F32, 8, 32)).WithDist("world", 0, 1)
	bl.Var("w1@GRAD", Tensor(F32, 16, 32)).WithDist("world", -1, 1).WithPartial(0, ReduceSum)
	bl.Persist("step", Tensor(I64, 1))
	bl.Persist("lr", Tensor(F32, 1)).WithDist("world", -1)
	bl.Persist("n", Tensor(I64, 1))
	bl.Var("s", Tensor(F32, 1))
	bl.Var("i", Tensor(I64, 1))
	bl.Var("cond", Tensor(Boolean, 1))
	bl.Var("scopes", NoShape(StepScopes))

	bl.Op("feed", Slots("X", "feed"), Slots("Out", "x"), A("col", Int(0)))
	mm := bl.Annotate(bl.Op("matmul_v2", Slots("X", "x", "Y", "w1"), Slots("Out", "h"),
		A("trans_x", Bool(false)), A("trans_y", Bool(false))), "matmul_v2", 0)
	bn := bl.Op("batch_norm", Slots("X", "h", "Mean", "rm"), Slots("Y", "hn", "MeanOut", "rm"), A("momentum", Float(0.9)))
	relu := bl.Annotate(bl.Op("relu", Slots("X", "hn"), Slots("Out", "r")), "default", 0)
	mean := bl.Annotate(bl.Op("mean", Slots("X", "r"), Slots("Out", "loss")), "default", 0).WithRole(RoleLoss)
	bl.Annotate(bl.Op("fill_any_like", Slots("X", "loss"), Slots("Out", "loss@GRAD"), A("value", Float(1))), "default", 0).
		WithRole(RoleBackward | RoleLoss).WithFwd(mean.ID)
	bl.Op("mean_grad", Slots("X", "r", "Out@GRAD", "loss@GRAD"), Slots("X@GRAD", "r@GRAD")).
		WithRole(RoleBackward).WithFwd(mean.ID)
	bl.Annotate(bl.Op("relu_grad", Slots("Out", "r", "Out@GRAD", "r@GRAD"), Slots("X@GRAD", "hn@GRAD")), "default", 0).
		WithRole(RoleBackward).WithFwd(relu.ID)
	bl.Op("batch_norm_grad", Slots("X", "h", "Y@GRAD", "hn@GRAD"), Slots("X@GRAD", "h@GRAD")).
		WithRole(RoleBackward).WithFwd(bn.ID)
	bl.Annotate(bl.Op("matmul_v2_grad", Slots("X", "x", "Y", "w1", "Out@GRAD", "h@GRAD"),
		[]Slot{S("X@GRAD"), S("Y@GRAD", "w1@GRAD")}, A("trans_x", Bool(false)), A("trans_y", Bool(false))), "matmul_v2", 0).
		WithRole(RoleBackward).WithFwd(mm.ID)
	bl.Op("scale", Slots("X", "step"), Slots("Out", "lr"), A("scale", Float(0.01))).WithRole(RoleLRSched)
	bl.Annotate(bl.Op("sgd", Slots("Param", "w1", "Grad", "w1@GRAD", "LearningRate", "lr"), Slots("ParamOut", "w1")), "default", 0).
		WithRole(RoleOptimize)
	bl.Op("assign_value", nil, Slots("Out", "s"), A("values", Floats{0}))
	bl.Op("fill_constant", nil, Slots("Out", "i"), A("value", Float(0)))
	bl.Op("less_than", Slots("X", "i", "Y", "n"), Slots("Out", "cond"))

	body := bl.SubBlock() // block 1
	inc := body.Op("increment", Slots("X", "i"), Slots("Out", "i"), A("step", Float(1)))
	body.Op("less_than", Slots("X", "i", "Y", "n"), Slots("Out", "cond"))
	then := body.SubBlock() // block 2
	body.Op("conditional_block", []Slot{S("Cond", "cond"), S("Input", "i")}, Slots("Out", "s"),
		A("sub_block", BlockRef(then.Block().Index)))
	then.Var("t", Tensor(F32, 1))
	then.Op("cast", Slots("X", "i"), Slots("Out", "t"), A("out_dtype", Int(5)))
	then.Op("assign", Slots("X", "t"), Slots("Out", "s"))

	while := bl.Op("while", []Slot{S("X", "i", "n"), S("Condition", "cond")},
		[]Slot{S("Out", "i", "cond", "s"), S("StepScopes", "scopes")}, A("sub_block", BlockRef(body.Block().Index)))

	grad := bl.SubBlock() // block 3
	grad.Block().Forward = body.Block().Index
	grad.Var("ig", Tensor(F32, 1))
	grad.Op("fill_constant", nil, Slots("Out", "ig"), A("value", Float(0))).WithRole(RoleBackward).WithFwd(inc.ID)

	bl.Op("while_grad", Slots("X", "i"), []Slot{S("X@GRAD")}, A("sub_block", BlockRef(grad.Block().Index))).
		WithRole(RoleBackward).WithFwd(while.ID)
	bl.Op("fetch", Slots("X", "loss"), Slots("Out", "fetch"), A("col", Int(0)))

	st := bl.Startup()
	st.Param("w1", Tensor(F32, 16, 32)).WithDist("world", -1, 1)
	st.Persist("rm", Tensor(F32, 32)).WithDist("world", 1)
	st.Persist("step", Tensor(I64, 1))
	st.Persist("lr", Tensor(F32, 1)).WithDist("world", -1)
	st.Persist("n", Tensor(I64, 1))
	st.Op("uniform_random", nil, Slots("Out", "w1"),
		A("shape", Ints{16, 32}), A("min", Float(-0.1)), A("max", Float(0.1)), A("seed", Int(7)))
	for _, name := range []string{"rm", "step", "lr", "n"} {
		st.Op("fill_constant", nil, Slots("Out", name), A("value", Float(0)))
	}

	m.ParamGrads = []ParamGrad{{Param: "w1", Grad: "w1@GRAD"}}
	if err := bl.Err(); err != nil {
		panic(err)
	}
	return m
}

// opIn returns the first op of type typ in block bi of p.
func opIn(p *Program, bi int, typ string) *Op {
	for _, op := range p.Blocks[bi].Ops {
		if op.Type == typ {
			return op
		}
	}
	panic("no op " + typ)
}

// mainOp returns the first op of type typ in main's block 0.
func mainOp(m *Module, typ string) *Op { return opIn(m.Main, 0, typ) }

// mainVar returns the var name of main's block 0.
func mainVar(m *Module, name string) *Var {
	v := m.Main.Global().Var(name)
	if v == nil {
		panic("no var " + name)
	}
	return v
}

// addDupVar declares a fresh var in b and then gives it the name of an
// existing var behind the block's back, as a careless pass might.
func addDupVar(b *Block, name string) {
	b.addVarUnchecked(&Var{name: name, Type: Tensor(F32, 1)})
}

func TestVerifyBase(t *testing.T) {
	if err := Verify(verifyBase()); err != nil {
		t.Fatalf("base module: %v\n%s", err, Print(verifyBase()))
	}
}

// TestVerifyRules breaks one rule at a time in the base module and checks
// the exact report.
func TestVerifyRules(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(m *Module)
		want   []string
	}{
		// Meshes.
		{"mesh/empty-shape", func(m *Module) {
			pm := m.Mesh("aux")
			pm.Shape, pm.DimNames, pm.ProcessIDs = nil, nil, nil
		}, []string{"mesh aux: empty shape"}},
		{"mesh/zero-size", func(m *Module) {
			pm := m.Mesh("aux")
			pm.Shape, pm.DimNames = []int{2, 0}, []string{"x", "y"}
		}, []string{"mesh aux: dim 1 has size 0; sizes must be positive"}},
		{"mesh/negative-size", func(m *Module) {
			pm := m.Mesh("aux")
			pm.Shape, pm.DimNames = []int{-2, 1}, []string{"x", "y"}
		}, []string{"mesh aux: dim 0 has size -2; sizes must be positive"}},
		{"mesh/dim-names-count", func(m *Module) { m.Mesh("aux").DimNames = []string{"x", "y"} },
			[]string{"mesh aux: 2 dim names for 1 dims"}},
		{"mesh/dim-name-twice", func(m *Module) {
			pm := m.Mesh("aux")
			pm.Shape, pm.DimNames = []int{2, 1}, []string{"x", "x"}
		}, []string{"mesh aux: dims 0 and 1 are both named x"}},
		{"mesh/negative-process-id", func(m *Module) { m.Mesh("aux").ProcessIDs = []int{4, -1} },
			[]string{"mesh aux: rank -1 is negative"}},
		{"mesh/process-id-twice", func(m *Module) { m.Mesh("aux").ProcessIDs = []int{4, 4} },
			[]string{"mesh aux: rank 4 appears 2 times"}},
		{"mesh/process-count", func(m *Module) { m.Mesh("aux").ProcessIDs = []int{4} },
			[]string{"mesh aux: shape [2] holds 2 processes but 1 ranks are given"}},
		{"mesh/count-overflow", func(m *Module) {
			pm := m.Mesh("aux")
			pm.Shape, pm.DimNames = []int{1 << 62, 4}, []string{"x", "y"}
		}, []string{"mesh aux: shape [4611686018427387904, 4] holds more processes than an int can count"}},
		{"mesh/declared-twice", func(m *Module) { m.Mesh("aux").Name = "world" },
			[]string{"mesh world: declared twice"}},
		{"mesh/empty-name", func(m *Module) { m.Mesh("aux").Name = "" },
			[]string{"meshes[1]: empty name"}},
		{"mesh/nil", func(m *Module) { m.Meshes = append(m.Meshes, nil) },
			[]string{"meshes[2] is nil"}},

		// Groups.
		{"group/negative-id", func(m *Module) { m.Groups[2].ID = -1 },
			[]string{"group -1: negative id"}},
		{"group/declared-twice", func(m *Module) { m.Groups[2].ID = 1 },
			[]string{"group 1: declared twice"}},
		{"group/no-ranks", func(m *Module) { m.Groups[2].Ranks = nil },
			[]string{"group 2: no ranks"}},
		{"group/negative-rank", func(m *Module) { m.Groups[2].Ranks = []int{-1, 3} },
			[]string{"group 2: negative rank -1"}},
		{"group/rank-twice", func(m *Module) { m.Groups[2].Ranks = []int{3, 3} },
			[]string{"group 2: rank 3 listed twice"}},
		{"group/not-ascending", func(m *Module) { m.Groups[2].Ranks = []int{3, 2} },
			[]string{"group 2: ranks [3, 2] not ascending"}},

		// Programs and blocks.
		{"program/no-main", func(m *Module) { m.Main = nil },
			[]string{"no main program"}},
		{"program/name", func(m *Module) { m.Main.Name = "train" },
			[]string{"main: program is named train"}},
		{"program/rank", func(m *Module) { m.Main.Rank = -2 },
			[]string{"main: invalid rank -2"}},
		{"program/no-blocks", func(m *Module) { m.Startup.Blocks = nil },
			[]string{"startup: no blocks"}},
		{"block/nil", func(m *Module) { m.Main.Blocks = append(m.Main.Blocks, nil) },
			[]string{"main block 4: nil block"}},
		{"block/index", func(m *Module) { m.Main.Blocks[3].Index = 7 },
			[]string{"main block 3: index 7 does not match its position"}},
		{"block/global-parent", func(m *Module) { m.Main.Blocks[0].Parent = 2 },
			[]string{"main block 0: global block has parent 2, want -1"}},
		{"block/parent-out-of-range", func(m *Module) { m.Main.Blocks[3].Parent = 9 },
			[]string{"main block 3: parent 9 is not a block"}},
		{"block/parent-missing", func(m *Module) { m.Main.Blocks[3].Parent = -1 },
			[]string{"main block 3: parent -1 is not a block"}},
		{"block/parent-itself", func(m *Module) { m.Main.Blocks[3].Parent = 3 },
			[]string{"main block 3: parent is itself"}},
		{"block/parent-cycle", func(m *Module) {
			m.Main.AddBlock(3)
			m.Main.Blocks[3].Parent = 4
		}, []string{"main block 3: parent chain is cyclic: 3 -> 4 -> 3"}},
		{"block/forward-out-of-range", func(m *Module) { m.Main.Blocks[3].Forward = 9 },
			[]string{"main block 3: forward 9 is not a block"}},
		{"block/forward-itself", func(m *Module) { m.Main.Blocks[3].Forward = 3 },
			[]string{"main block 3: forward is itself"}},

		// Vars.
		{"var/declared-twice", func(m *Module) { addDupVar(m.Main.Global(), "h") },
			[]string{"main block 0: var h: declared twice"}},
		{"var/declared-twice-small-block", func(m *Module) { addDupVar(m.Main.Blocks[3], "ig") },
			[]string{"main block 3: var ig: declared twice"}},
		{"var/no-name", func(m *Module) { m.Main.Blocks[3].AddVar(&Var{Type: Tensor(F32, 1)}) },
			[]string{"main block 3: var at position 1 has no name"}},
		{"var/nil", func(m *Module) { m.Main.Blocks[3].addVarUnchecked(nil) },
			[]string{"main block 3: var at position 1 is nil"}},
		{"var/kind", func(m *Module) { mainVar(m, "n").Kind = 7 },
			[]string{"main block 0: var n: unknown kind varkind(7)"}},
		{"var/flags", func(m *Module) { mainVar(m, "x").Flags |= 1 << 10 },
			[]string{"main block 0: var x: unknown flag bits 0x400"}},
		{"var/attr-nil", func(m *Module) { mainVar(m, "x").Attrs = Attrs{{Name: "a"}} },
			[]string{"main block 0: var x: attr a has no value"}},
		{"var/attrs-order", func(m *Module) {
			mainVar(m, "x").Attrs = Attrs{{Name: "b", Value: Int(1)}, {Name: "a", Value: Int(2)}}
		}, []string{"main block 0: var x: attrs out of order: b before a"}},
		{"var/attr-scalar", func(m *Module) { mainVar(m, "x").Attrs = Attrs{{Name: "s", Value: Scalar{Type: 9}}} },
			[]string{"main block 0: var x: attr s: invalid scalar"}},
		{"var/attr-twice", func(m *Module) {
			mainVar(m, "x").Attrs = Attrs{{Name: "a", Value: Int(1)}, {Name: "a", Value: Int(2)}}
		}, []string{"main block 0: var x: attr a set twice"}},
		{"var/no-dtype", func(m *Module) { mainVar(m, "h").Type.DType = DTypeInvalid },
			[]string{"main block 0: var h: no dtype"}},
		{"var/unknown-dtype", func(m *Module) { mainVar(m, "h").Type.DType = 42 },
			[]string{"main block 0: var h: unknown dtype dtype(42)"}},
		{"var/dim-below-minus-one", func(m *Module) { mainVar(m, "h").Type.Shape = []int64{8, -2} },
			[]string{"main block 0: var h: shape [8, -2]: dim 1 is -2, below -1"}},
		{"var/numel-overflow", func(m *Module) { mainVar(m, "h").Type.Shape = []int64{1 << 32, 1 << 31} },
			[]string{"main block 0: var h: shape [4294967296, 2147483648]: element count overflows int64"}},
		{"var/unknown-type-kind", func(m *Module) { mainVar(m, "feed").Type.Kind = 42 },
			[]string{"main block 0: var feed: unknown type kind typekind(42)"}},
		{"var/no-shape-dtype", func(m *Module) { mainVar(m, "feed").Type.DType = F32 },
			[]string{"main block 0: var feed: feed_list has dtype f32"}},
		{"var/no-shape-shape", func(m *Module) { mainVar(m, "feed").Type.Shape = []int64{1} },
			[]string{"main block 0: var feed: feed_list has shape [1]"}},
		{"var/no-shape-dist", func(m *Module) { mainVar(m, "feed").WithDist("world") },
			[]string{"main block 0: var feed: feed_list has a dist"}},
		{"var/dist-mesh", func(m *Module) { mainVar(m, "x").Dist.Mesh = "nowhere" },
			[]string{"main block 0: var x: dist on unknown mesh nowhere"}},
		{"var/dist-length", func(m *Module) { mainVar(m, "x").Dist.DimsMapping = []int{0} },
			[]string{"main block 0: var x: dims_mapping [0] has length 1, tensor rank is 2"}},
		{"var/dist-scalar-length", func(m *Module) { mainVar(m, "loss@GRAD").Dist.DimsMapping = []int{-1} },
			[]string{"main block 0: var loss@GRAD: dims_mapping [-1] has length 1, tensor rank is 0"}},
		{"var/dist-entry-high", func(m *Module) { mainVar(m, "h").Dist.DimsMapping = []int{0, 2} },
			[]string{"main block 0: var h: dims_mapping [0, 2] has entry 2 outside [-1, 2) of mesh world"}},
		{"var/dist-entry-low", func(m *Module) { mainVar(m, "h").Dist.DimsMapping = []int{-2, 1} },
			[]string{"main block 0: var h: dims_mapping [-2, 1] has entry -2 outside [-1, 2) of mesh world"}},
		{"var/dist-entry-unknown-mesh", func(m *Module) { mainVar(m, "h").Dist = &TensorDist{Mesh: "nowhere", DimsMapping: []int{-3, 5}} },
			[]string{
				"main block 0: var h: dist on unknown mesh nowhere",
				"main block 0: var h: dims_mapping [-3, 5] has entry -3 below -1",
			}},
		{"var/dist-dim-twice", func(m *Module) { mainVar(m, "h").Dist.DimsMapping = []int{0, 0} },
			[]string{"main block 0: var h: dims_mapping [0, 0] uses mesh dim 0 twice"}},
		{"var/partial-range", func(m *Module) { mainVar(m, "loss").Dist.Partial = []Partial{{Dim: 2, Reduce: ReduceAvg}} },
			[]string{"main block 0: var loss: partial dim 2 outside [0, 2) of mesh world"}},
		{"var/partial-negative", func(m *Module) { mainVar(m, "loss").Dist.Partial = []Partial{{Dim: -1}} },
			[]string{"main block 0: var loss: partial dim -1 outside [0, 2) of mesh world"}},
		{"var/partial-twice", func(m *Module) { mainVar(m, "loss").Dist.Partial = []Partial{{Dim: 0}, {Dim: 0, Reduce: ReduceAvg}} },
			[]string{"main block 0: var loss: partial dim 0 listed twice"}},
		{"var/partial-order", func(m *Module) { mainVar(m, "loss").Dist.Partial = []Partial{{Dim: 1}, {Dim: 0}} },
			[]string{"main block 0: var loss: partial dims not sorted: 1 before 0"}},
		{"var/local-range", func(m *Module) { mainVar(m, "step").WithDist("world", -1).WithLocal(2) },
			[]string{"main block 0: var step: local dim 2 outside [0, 2) of mesh world"}},
		{"var/local-negative", func(m *Module) { mainVar(m, "step").WithDist("world", -1).Dist.Local = []int{-1} },
			[]string{"main block 0: var step: local dim -1 outside [0, 2) of mesh world"}},
		{"var/local-twice", func(m *Module) { mainVar(m, "step").WithDist("world", -1).Dist.Local = []int{0, 0} },
			[]string{"main block 0: var step: local dim 0 listed twice"}},
		{"var/local-order", func(m *Module) { mainVar(m, "step").WithDist("world", -1).Dist.Local = []int{1, 0} },
			[]string{"main block 0: var step: local dims not sorted: 1 before 0"}},
		{"var/local-float", func(m *Module) { mainVar(m, "h").WithLocal(0) },
			[]string{"main block 0: var h: local [0] on a f32 tensor: rank-local values are positions, which an integer tensor holds"}},
		{"var/partial-mapped", func(m *Module) { mainVar(m, "h").WithPartial(0, ReduceSum) },
			[]string{"main block 0: var h: partial dim 0 is also in dims_mapping [0, 1]"}},
		{"var/partial-reduce", func(m *Module) { mainVar(m, "loss").Dist.Partial[0].Reduce = 9 },
			[]string{"main block 0: var loss: partial dim 0 has unknown reduction reduce(9)"}},

		// Ops.
		{"op/nil", func(m *Module) { m.Main.Blocks[3].Ops = append(m.Main.Blocks[3].Ops, nil) },
			[]string{"main block 3: op at position 1 is nil"}},
		{"op/id-zero", func(m *Module) { mainOp(m, "fetch").ID = 0 },
			[]string{"main block 0: op 0 fetch: id 0 is not positive (position 17 in block)"}},
		{"op/id-zero-no-type", func(m *Module) {
			op := mainOp(m, "fetch")
			op.ID, op.Type = -4, ""
		}, []string{
			"main block 0: op -4: id -4 is not positive (position 17 in block)",
			"main block 0: op -4: empty type (position 17 in block)",
		}},
		{"op/id-twice", func(m *Module) { opIn(m.Main, 3, "fill_constant").ID = 4 },
			[]string{"main block 3: op 4 fill_constant: id already used by op 4 relu in block 0"}},
		{"op/empty-type", func(m *Module) { mainOp(m, "fetch").Type = "" },
			[]string{"main block 0: op 24: empty type (position 17 in block)"}},
		{"op/role", func(m *Module) { mainOp(m, "fetch").Role = 0x20 },
			[]string{"main block 0: op 24 fetch: invalid role 0x20"}},
		{"op/attr-nil", func(m *Module) { mainOp(m, "fetch").Attrs[0].Value = nil },
			[]string{"main block 0: op 24 fetch: attr col has no value"}},
		{"op/attrs-order", func(m *Module) { mainOp(m, "fetch").Attrs = Attrs{A("col", Int(0)), A("a", Int(1))} },
			[]string{"main block 0: op 24 fetch: attrs out of order: col before a"}},
		{"op/scalars", func(m *Module) {
			mainOp(m, "fetch").Attrs.Set("s", Scalars{LongScalar(1), {Type: ScalarLong, R: 1}})
		}, []string{"main block 0: op 24 fetch: attr s: element 1 is an invalid scalar"}},
		{"op/var-ref", func(m *Module) { mainOp(m, "fetch").Attrs.Set("v", VarRef("nosuch")) },
			[]string{"main block 0: op 24 fetch: attr v names undeclared var nosuch"}},
		{"op/var-refs", func(m *Module) { mainOp(m, "fetch").Attrs.Set("v", VarRefs{"x", "nosuch"}) },
			[]string{"main block 0: op 24 fetch: attr v names undeclared var nosuch"}},
		{"var/lod-on-no-shape", func(m *Module) { mainVar(m, "scopes").Type.HasLoD = true },
			[]string{"main block 0: var scopes: step_scopes has a lod level"}},
		{"var/lod-negative", func(m *Module) { t := &mainVar(m, "x").Type; t.LoD, t.HasLoD = -1, true },
			[]string{"main block 0: var x: negative lod level -1"}},
		{"var/tensor-elems", func(m *Module) { mainVar(m, "x").Type.Elems = []Type{Tensor(F32)} },
			[]string{"main block 0: var x: tensor has elements"}},
		{"var/array-elems", func(m *Module) {
			mainVar(m, "scopes").Type = Type{Kind: TensorArray, Elems: []Type{Tensor(F32), NoShape(Raw)}}
		}, []string{"main block 0: var scopes: tensor_array has 2 elements, want at most 1",
			"main block 0: var scopes: element 1 of tensor_array: is not a tensor with a dtype"}},
		{"op/attr-twice", func(m *Module) { mainOp(m, "fetch").Attrs = Attrs{A("col", Int(0)), A("col", Int(1))} },
			[]string{"main block 0: op 24 fetch: attr col set twice"}},
		{"op/block-ref-missing", func(m *Module) { mainOp(m, "while_grad").Attrs.Set("sub_block", BlockRef(9)) },
			[]string{"main block 0: op 23 while_grad: attr sub_block: block 9 does not exist"}},
		{"op/block-ref-global", func(m *Module) { mainOp(m, "while_grad").Attrs.Set("sub_block", BlockRef(0)) },
			[]string{"main block 0: op 23 while_grad: attr sub_block: refers to the global block"}},
		{"op/block-ref-own", func(m *Module) { opIn(m.Main, 1, "conditional_block").Attrs.Set("sub_block", BlockRef(1)) },
			[]string{"main block 1: op 18 conditional_block: attr sub_block: refers to its own block 1"}},
		{"op/block-ref-ancestor", func(m *Module) { opIn(m.Main, 2, "cast").Attrs.Set("sub_block", BlockRef(1)) },
			[]string{"main block 2: op 19 cast: attr sub_block: refers to block 1, an ancestor of its own block 2"}},
		{"op/block-refs-cycle", func(m *Module) {
			opIn(m.Main, 2, "cast").Attrs.Set("sub_block", BlockRef(3))
			opIn(m.Main, 3, "fill_constant").Attrs.Set("sub_block", BlockRef(1))
		}, []string{"main block 3: op 22 fill_constant: attr sub_block: block refs form a cycle: 1 -> 2 -> 3 -> 1"}},
		{"op/block-refs-missing", func(m *Module) { mainOp(m, "while_grad").Attrs.Set("sub_blocks", BlockRefs{3, -1}) },
			[]string{"main block 0: op 23 while_grad: attr sub_blocks: block -1 does not exist"}},
		{"op/input-undeclared", func(m *Module) {
			op := mainOp(m, "matmul_v2_grad")
			op.Inputs[0].Args[0] = "x2"
			op.Dist.Inputs[0].Name = "x2"
		}, []string{"main block 0: op 10 matmul_v2_grad: input X names undeclared var x2"}},
		{"op/input-undeclared-quoted", func(m *Module) { mainOp(m, "batch_norm_grad").Inputs[0].Args[0] = "h 2" },
			[]string{`main block 0: op 9 batch_norm_grad: input X names undeclared var "h 2"`}},
		{"op/input-not-in-scope", func(m *Module) { mainOp(m, "fetch").Inputs[0].Args[0] = "t" },
			[]string{"main block 0: op 24 fetch: input X names undeclared var t"}},
		{"op/output-undeclared", func(m *Module) { mainOp(m, "batch_norm_grad").Outputs[0].Args[0] = "hg2" },
			[]string{"main block 0: op 9 batch_norm_grad: output X@GRAD names undeclared var hg2"}},
		{"op/fwd-missing", func(m *Module) { mainOp(m, "mean_grad").Fwd = 999 },
			[]string{"main block 0: op 7 mean_grad: fwd 999 names no op"}},
		{"op/fwd-negative", func(m *Module) { mainOp(m, "mean_grad").Fwd = -5 },
			[]string{"main block 0: op 7 mean_grad: fwd -5 names no op"}},
		{"op/fwd-other-program", func(m *Module) { mainOp(m, "mean_grad").Fwd = 25 },
			[]string{"main block 0: op 7 mean_grad: fwd 25 names no op"}},
		{"op/fwd-not-forward", func(m *Module) { mainOp(m, "mean_grad").Fwd = 8 },
			[]string{"main block 0: op 7 mean_grad: fwd 8 names op 8 relu_grad, whose role backward is not forward"}},
		{"op/fwd-on-forward", func(m *Module) { mainOp(m, "relu").Fwd = 2 },
			[]string{"main block 0: op 4 relu: forward op has fwd 2"}},
		{"op/fwd-on-loss", func(m *Module) { mainOp(m, "mean").Fwd = 4 },
			[]string{"main block 0: op 5 mean: forward op has fwd 4"}},

		// Op dists.
		{"dist/mesh", func(m *Module) { mainOp(m, "matmul_v2").Dist.Mesh = "nowhere" },
			[]string{"main block 0: op 2 matmul_v2: dist: unknown mesh nowhere"}},
		{"dist/impl-index", func(m *Module) { mainOp(m, "matmul_v2").Dist.ImplIndex = -1 },
			[]string{"main block 0: op 2 matmul_v2: dist: negative impl index -1"}},
		{"dist/not-an-input", func(m *Module) { mainOp(m, "matmul_v2").Dist.Inputs[0].Name = "h" },
			[]string{"main block 0: op 2 matmul_v2: dist input h: not an input of the op"}},
		{"dist/not-an-output", func(m *Module) { mainOp(m, "matmul_v2").Dist.Outputs[0].Name = "x" },
			[]string{"main block 0: op 2 matmul_v2: dist output x: not an output of the op"}},
		{"dist/length", func(m *Module) { mainOp(m, "matmul_v2").Dist.Inputs[0].DimsMapping = []int{0} },
			[]string{"main block 0: op 2 matmul_v2: dist input x: dims_mapping [0] has length 1, tensor rank is 2"}},
		{"dist/entry", func(m *Module) { mainOp(m, "matmul_v2").Dist.Inputs[1].DimsMapping = []int{-1, 5} },
			[]string{"main block 0: op 2 matmul_v2: dist input w1: dims_mapping [-1, 5] has entry 5 outside [-1, 2) of mesh world"}},
		{"dist/dim-twice", func(m *Module) { mainOp(m, "matmul_v2").Dist.Outputs[0].DimsMapping = []int{1, 1} },
			[]string{"main block 0: op 2 matmul_v2: dist output h: dims_mapping [1, 1] uses mesh dim 1 twice"}},

		// SSA.
		{"ssa/two-definers", func(m *Module) {
			op := mainOp(m, "relu")
			op.Outputs[0].Args[0] = "h"
			op.Dist.Outputs[0].Name = "h"
		}, []string{"main block 0: var h: defined by op 4 relu and op 2 matmul_v2"}},
		{"ssa/owner-without-sub-block", func(m *Module) { mainOp(m, "while").Attrs.Delete("sub_block") },
			[]string{"main block 0: var s: defined by op 21 while and op 13 assign_value"}},
		{"ssa/sub-block-no-longer-writes", func(m *Module) {
			opIn(m.Main, 1, "conditional_block").Outputs[0].Args = []string{}
			b2 := m.Main.Blocks[2]
			b2.Ops = b2.Ops[:1]
		}, []string{"main block 0: var s: defined by op 21 while and op 13 assign_value"}},
		{"ssa/many-inputs", func(m *Module) {
			xs := make([]string, 17)
			for i := range xs {
				xs[i] = "x"
			}
			NewBuilder(m).Op("concat", []Slot{S("X", xs...)}, Slots("Out", "h"))
		}, []string{"main block 0: var h: defined by op 30 concat and op 2 matmul_v2"}},
		{"ssa/in-sub-block", func(m *Module) { opIn(m.Main, 2, "cast").Outputs[0].Args[0] = "s" },
			[]string{"main block 2: var s: defined by op 20 assign and op 19 cast"}},

		// Persistables.
		{"persist/backward-writes", func(m *Module) {
			op := mainOp(m, "matmul_v2_grad")
			op.Outputs[1].Args[0] = "w1"
			op.Dist.Outputs[0].Name = "w1"
		}, []string{"main block 0: op 10 matmul_v2_grad: writes persistable w1 but has role backward, not optimize or lrsched"}},
		// A param is written by optimize ops alone (state may be written
		// by a forward op: TestVerifyForwardWritesState).
		{"persist/forward-writes-param", func(m *Module) {
			mainOp(m, "batch_norm").Inputs = Slots("X", "h")
			m.Main.Global().Var("rm").Kind = KindParam
		}, []string{"main block 0: op 3 batch_norm: writes persistable rm but has role forward, not optimize or lrsched"}},
		{"persist/written-twice-reported-once", func(m *Module) {
			op := mainOp(m, "batch_norm")
			op.Inputs = Slots("X", "h")
			op.Outputs = append(op.Outputs, S("VarianceOut", "rm"))
			m.Main.Global().Var("rm").Kind = KindParam
		}, []string{"main block 0: op 3 batch_norm: writes persistable rm but has role forward, not optimize or lrsched"}},
		{"persist/forward-in-sub-block", func(m *Module) {
			opIn(m.Main, 2, "assign").Outputs[0].Args[0] = "lr"
			m.Main.Global().Var("lr").Kind = KindParam
		}, []string{"main block 2: op 20 assign: writes persistable lr but has role forward, not optimize or lrsched"}},

		// Params and grads.
		{"grads/param-undeclared", func(m *Module) { m.ParamGrads = append(m.ParamGrads, ParamGrad{Param: "w9"}) },
			[]string{"grads: param w9 is not declared"}},
		{"grads/param-not-persistable", func(m *Module) { m.ParamGrads = append(m.ParamGrads, ParamGrad{Param: "h"}) },
			[]string{"grads: param h is not persistable"}},
		{"grads/param-twice", func(m *Module) { m.ParamGrads = append(m.ParamGrads, ParamGrad{Param: "w1"}) },
			[]string{"grads: param w1 listed twice"}},
		{"grads/no-param", func(m *Module) { m.ParamGrads = append(m.ParamGrads, ParamGrad{}) },
			[]string{"grads: entry 1 has no param"}},
		{"grads/grad-undeclared", func(m *Module) { m.ParamGrads[0].Grad = "w1@GRAD2" },
			[]string{"grads: grad w1@GRAD2 of w1 is not declared"}},

		// The startup program is checked by the same rules, except that it
		// may write persistables freely.
		{"startup/output-undeclared", func(m *Module) { opIn(m.Startup, 0, "uniform_random").Outputs[0].Args[0] = "w2" },
			[]string{"startup block 0: op 25 uniform_random: output Out names undeclared var w2"}},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		if seen[tt.name] {
			t.Fatalf("case %s listed twice", tt.name)
		}
		seen[tt.name] = true
		t.Run(tt.name, func(t *testing.T) {
			m := verifyBase()
			tt.mutate(m)
			err := Verify(m)
			if err == nil {
				t.Fatalf("Verify = nil, want:\n%s", strings.Join(tt.want, "\n"))
			}
			var ve *VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("Verify returned %T, want *VerifyError", err)
			}
			if got, want := err.Error(), strings.Join(tt.want, "\n"); got != want {
				t.Errorf("Verify:\ngot:\n%s\nwant:\n%s", got, want)
			}
			if len(ve.Violations) != len(tt.want) {
				t.Errorf("%d violations, want %d", len(ve.Violations), len(tt.want))
			}
		})
	}
}

// TestVerifyAllowed checks variations of the base module that the rules
// allow.
func TestVerifyAllowed(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(m *Module)
	}{
		{"unknown-dims-skipped-in-numel", func(m *Module) { mainVar(m, "h").Type.Shape = []int64{-1, 1 << 62} }},
		{"zero-dim", func(m *Module) { mainVar(m, "h").Type.Shape = []int64{0, 1 << 62} }},
		{"no-startup", func(m *Module) { m.Startup = nil }},
		{"no-grad", func(m *Module) { m.ParamGrads[0].Grad = "" }},
		{"grad-in-sub-block", func(m *Module) { m.ParamGrads[0].Grad = "t" }},
		{"param-kind-persist", func(m *Module) { m.ParamGrads[0].Param = "rm" }},
		{"no-groups", func(m *Module) { m.Groups = nil }},
		{"partitioned-rank", func(m *Module) { m.Main.Rank = 3 }},
		{"sparse-ids", func(m *Module) { mainOp(m, "fetch").ID = 1 << 40 }},
		{"fwd-to-sparse-id", func(m *Module) {
			mainOp(m, "relu").ID = 1 << 40
			mainOp(m, "relu_grad").Fwd = 1 << 40
		}},
		{"var-renamed", func(m *Module) {
			// The block's table, which the verifier resolves names
			// through, follows the rename.
			if err := m.Main.Global().RenameVar("r", "r2"); err != nil {
				panic(err)
			}
			for _, op := range m.Main.Global().Ops {
				renameArgs(op, "r", "r2")
			}
		}},
		{"nested-write-is-loop-carried", func(m *Module) {
			// The while still owns the write of s through block 2.
			opIn(m.Main, 1, "conditional_block").Outputs[0].Args = []string{}
		}},
		{"owner-with-block-refs", func(m *Module) {
			op := mainOp(m, "while")
			op.Attrs.Delete("sub_block")
			op.Attrs.Set("sub_blocks", BlockRefs{1})
		}},
		{"paddle-values", func(m *Module) {
			mainOp(m, "fetch").Attrs = Attrs{A("l", Long(1)), A("s", ComplexScalar(1, 2)),
				A("ss", Scalars{BoolScalar(true), Float64Scalar(0.5)}), A("v", VarRef("x")), A("vs", VarRefs{"x", "h"})}
			mainVar(m, "scopes").Type = Type{Kind: Reader, Elems: []Type{{Kind: DenseTensor, DType: F32, Shape: []int64{-1, 3}, HasLoD: true, LoD: 1}}}
			t := &mainVar(m, "x").Type
			t.HasLoD, t.LoD = true, 2
		}},
		{"owner-listing-output-twice", func(m *Module) {
			op := mainOp(m, "fill_constant")
			op.Outputs[0].Args = []string{"i", "i"}
		}},
		{"in-place-many-inputs", func(m *Module) {
			// An op with many inputs updating them all in place, like
			// check_finite_and_unscale, takes the read-set path.
			bl := NewBuilder(m)
			var names []string
			for i := range 20 {
				name := "g" + string(rune('a'+i))
				bl.Var(name, Tensor(F32, 4))
				bl.Op("fill_constant", nil, Slots("Out", name))
				names = append(names, name)
			}
			bl.Op("check_finite_and_unscale", []Slot{S("X", names...)}, []Slot{S("Out", names...)}).WithRole(RoleBackward)
		}},
		{"lrsched-and-optimize", func(m *Module) { mainOp(m, "scale").Role = RoleOptimize | RoleLRSched }},
		{"shared-arg-dists", func(m *Module) {
			// An op reading one var twice has an arg dist for each use.
			bl := NewBuilder(m)
			bl.Var("hh", Tensor(F32, 8, 32)).WithDist("world", 0, 1)
			bl.Annotate(bl.Op("elementwise_add", Slots("X", "h", "Y", "h"), Slots("Out", "hh")), "default", 0)
		}},
		{"arg-dists-out-of-order", func(m *Module) {
			d := mainOp(m, "matmul_v2").Dist
			d.Inputs[0], d.Inputs[1] = d.Inputs[1], d.Inputs[0]
		}},
		{"many-meshes", func(m *Module) {
			for i := range 10 {
				m.Meshes = append(m.Meshes, &ProcessMesh{Name: "m" + string(rune('a'+i)), Shape: []int{1}, DimNames: []string{"d"}, ProcessIDs: []int{i}})
			}
			mainVar(m, "h").Dist.Mesh = "mj"
			mainVar(m, "h").Dist.DimsMapping = []int{0, -1}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := verifyBase()
			tt.mutate(m)
			if err := Verify(m); err != nil {
				t.Fatalf("Verify: %v", err)
			}
		})
	}
}

func renameArgs(op *Op, old, new string) {
	for _, ss := range [][]Slot{op.Inputs, op.Outputs} {
		for _, s := range ss {
			for i, a := range s.Args {
				if a == old {
					s.Args[i] = new
				}
			}
		}
	}
	if op.Dist != nil {
		for _, as := range [][]ArgDist{op.Dist.Inputs, op.Dist.Outputs} {
			for i := range as {
				if as[i].Name == old {
					as[i].Name = new
				}
			}
		}
	}
}

// TestVerifyOrder checks that every violation is reported, module-level
// first, then main, then startup, each in block, var and op order.
func TestVerifyOrder(t *testing.T) {
	m := verifyBase()
	opIn(m.Startup, 0, "uniform_random").Outputs[0].Args[0] = "w2"
	mainOp(m, "fetch").Role = 0x20
	opIn(m.Main, 2, "cast").Outputs[0].Args[0] = "s"
	mainVar(m, "h").Dist.DimsMapping = []int{0, 0}
	m.Main.Blocks[3].Forward = 3
	m.ParamGrads = append(m.ParamGrads, ParamGrad{Param: "w9"})
	mainOp(m, "mean_grad").Fwd = 999
	m.Groups[2].Ranks = nil
	m.Mesh("aux").ProcessIDs = []int{4}
	want := []string{
		"mesh aux: shape [2] holds 2 processes but 1 ranks are given",
		"group 2: no ranks",
		"grads: param w9 is not declared",
		"main block 0: var h: dims_mapping [0, 0] uses mesh dim 0 twice",
		"main block 0: op 7 mean_grad: fwd 999 names no op",
		"main block 0: op 24 fetch: invalid role 0x20",
		"main block 2: var s: defined by op 20 assign and op 19 cast",
		"main block 3: forward is itself",
		"startup block 0: op 25 uniform_random: output Out names undeclared var w2",
	}
	for range 3 { // the same report every time
		err := Verify(m)
		if err == nil {
			t.Fatal("Verify = nil")
		}
		if got := err.Error(); got != strings.Join(want, "\n") {
			t.Fatalf("got:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
		}
	}
}

// TestVerifyDoesNotMutate checks that Verify leaves the module, including
// the blocks' name indexes, as it found it.
func TestVerifyDoesNotMutate(t *testing.T) {
	m := verifyBase()
	addDupVar(m.Main.Global(), "h") // the index holds the first h only
	before := Print(m)
	idx := m.Main.Global().index
	slots := slices.Clone(idx.slots)
	if Verify(m) == nil {
		t.Fatal("Verify = nil, want a duplicate var")
	}
	if after := Print(m); string(after) != string(before) {
		t.Errorf("Verify changed the module:\n%s", after)
	}
	if got := m.Main.Global().index; got.n != idx.n || !slices.Equal(got.slots, slots) {
		t.Errorf("Verify changed block 0's index: %d entries, had %d", got.n, idx.n)
	}
}

func TestVerifyNilModule(t *testing.T) {
	err := Verify(nil)
	if err == nil || err.Error() != "nil module" {
		t.Fatalf("Verify(nil) = %v, want nil module", err)
	}
}

// TestVerifyPathological checks that broken structure is reported, never
// a panic.
func TestVerifyPathological(t *testing.T) {
	tests := []struct {
		name string
		m    *Module
		want string
	}{
		{"empty-module", &Module{}, "no main program"},
		{"empty-main", &Module{Main: &Program{Name: "main", Rank: -1}}, "main: no blocks"},
		{"all-nil", &Module{
			Meshes: []*ProcessMesh{nil},
			Main:   &Program{Name: "main", Rank: -1, Blocks: []*Block{{Parent: -1, Forward: -1, Ops: []*Op{nil}}, nil}},
		}, "meshes[0] is nil\nmain block 0: op at position 0 is nil\nmain block 1: nil block"},
		{"cycle-through-global", func() *Module {
			m := NewModule("c")
			m.Main.AddBlock(0)
			m.Main.Blocks[0].Parent = 1
			return m
		}(), "main block 0: global block has parent 1, want -1"},
		{"refs-cycle", func() *Module {
			// Blocks that refer to each other: the transitive write set
			// must not loop.
			m := NewModule("c")
			bl := NewBuilder(m)
			bl.Var("a", Tensor(F32, 1))
			bl.Var("b", Tensor(F32, 1))
			b1, b2 := bl.SubBlock(), bl.SubBlock()
			b2.Block().Parent = 1
			bl.Op("fill_constant", nil, Slots("Out", "a"))
			bl.Op("while", nil, Slots("Out", "a"), A("sub_block", BlockRef(1)))
			b1.Op("while", nil, Slots("Out", "b"), A("sub_block", BlockRef(2)))
			b2.Op("while", nil, Slots("Out", "b"), A("sub_block", BlockRef(1)))
			return m
		}(), "main block 0: var a: defined by op 2 while and op 1 fill_constant\n" +
			"main block 2: op 4 while: attr sub_block: refers to block 1, an ancestor of its own block 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify(tt.m)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("got:\n%v\nwant:\n%s", err, tt.want)
			}
		})
	}
}

func TestViolationError(t *testing.T) {
	tests := []struct {
		v    Violation
		want string
	}{
		{Violation{Block: -1, Msg: "mesh world: empty shape"}, "mesh world: empty shape"},
		{Violation{Program: "main", Block: -1, Msg: "no blocks"}, "main: no blocks"},
		{Violation{Program: "main", Block: 2, Msg: "parent is itself"}, "main block 2: parent is itself"},
		{Violation{Program: "main", Block: 0, Var: "h", Msg: "no dtype"}, "main block 0: var h: no dtype"},
		{Violation{Program: "main", Block: 0, Var: "a b", Msg: "no dtype"}, `main block 0: var "a b": no dtype`},
		{Violation{Program: "main", Block: 0, OpID: 9, OpType: "matmul_v2_grad", Var: "x2", Msg: "input X names undeclared var x2"},
			"main block 0: op 9 matmul_v2_grad: input X names undeclared var x2"},
		{Violation{Program: "startup", Block: 0, OpID: 3, Msg: "empty type"}, "startup block 0: op 3: empty type"},
		{Violation{Program: "main", Block: 0, OpType: "my op", Msg: "m"}, `main block 0: op 0 "my op": m`},
		{Violation{Block: 1, Msg: "m"}, "block 1: m"},
	}
	for _, tt := range tests {
		if got := tt.v.Error(); got != tt.want {
			t.Errorf("%+v.Error() = %q, want %q", tt.v, got, tt.want)
		}
	}
	e := &VerifyError{Violations: []Violation{tests[0].v, tests[1].v}}
	if got, want := e.Error(), "mesh world: empty shape\nmain: no blocks"; got != want {
		t.Errorf("VerifyError.Error() = %q, want %q", got, want)
	}
}

// Programs from Paddle are not SSA: an op may update in place a var it
// also reads (inference batch_norm's running statistics, sgd's ParamOut,
// increment), any number of times; two ops that define a var without
// reading it are still caught, in place updates between them or not.
func TestVerifyInPlaceUpdates(t *testing.T) {
	src := `program main {
  block 0 {
    var x : f32[2, 4]
    var mean : f32[4]
    var variance : f32[4]
    var y : f32[2, 4]
    var i : i64[1]
    param w : f32[4]
    var g : f32[4]
    persist lr : f32[1]
    op 1 fill_constant() -> (Out: x) {shape = [2, 4]} role forward
    op 2 fill_constant() -> (Out: mean) {shape = [4]} role forward
    op 3 fill_constant() -> (Out: variance) {shape = [4]} role forward
    op 4 batch_norm(X: x, Mean: mean, Variance: variance) -> (Y: y, MeanOut: mean, VarianceOut: variance) {is_test = true} role forward
    op 5 fill_constant() -> (Out: i) {shape = [1]} role forward
    op 6 increment(X: i) -> (Out: i) {step = 1.0} role forward
    op 7 increment(X: i) -> (Out: i) {step = 1.0} role forward
    op 8 fill_constant() -> (Out: g) {shape = [4]} role backward
    op 9 sgd(Param: w, Grad: g, LearningRate: lr) -> (ParamOut: w) role optimize
  }
}`
	m, err := Parse("inplace.dpir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(m); err != nil {
		t.Fatalf("in-place updates rejected:\n%v", err)
	}
	bad := []struct {
		name string
		edit func(b *Block)
		want string
	}{
		{"second definer after in-place updates", func(b *Block) {
			b.Ops = append(b.Ops, &Op{ID: 10, Type: "fill_constant", Outputs: Slots("Out", "i")})
		}, "main block 0: var i: defined by op 10 fill_constant and op 5 fill_constant"},
		{"in-place op that does not read", func(b *Block) {
			b.Ops[5].Inputs = nil // increment no longer reads i: it defines it again
		}, "main block 0: var i: defined by op 6 increment and op 5 fill_constant"},
		{"reading another var is not in place", func(b *Block) {
			b.Ops[3].Inputs = Slots("X", "x", "Mean", "variance", "Variance", "variance")
		}, "main block 0: var mean: defined by op 4 batch_norm and op 2 fill_constant"},
	}
	for _, tt := range bad {
		c := m.Clone()
		tt.edit(c.Main.Global())
		err := Verify(c)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: Verify = %v\nwant %s", tt.name, err, tt.want)
		}
	}
}

// A temp read before the op of its block that defines it is an error,
// reported once at the definition; reading a var with no definer (fed),
// a data var, a parent block's var, or an in-place update is not.
func TestVerifyReadBeforeDef(t *testing.T) {
	const src = `program main {
  block 0 {
    var x : f32[4] {is_data}
    var d : f32[4] {is_data}
    var a : f32[4]
    var b : f32[4]
    var c : f32[4]
    var i : i64[1]
    var cond : bool[1]
    op 1 relu(X: a) -> (Out: b)
    op 2 relu(X: a) -> (Out: c)
    op 3 relu(X: x) -> (Out: a)
    op 4 relu(X: d) -> (Out: d)
    op 5 fill_constant() -> (Out: i) {shape = [1], value = 0.0}
    op 6 increment(X: i) -> (Out: i)
    op 7 fill_constant() -> (Out: cond) {shape = [1], value = 1.0}
    op 8 while(X: x, Condition: cond) -> () {sub_block = ^1}
  }
  block 1 parent 0 {
    var t : f32[4]
    op 9 relu(X: b) -> (Out: t)
  }
}`
	m, err := ParseString("t.dpir", src)
	if err != nil {
		t.Fatal(err)
	}
	err = Verify(m)
	want := "main block 0: var a: read by op 1 relu before op 3 relu defines it"
	if err == nil || err.Error() != want {
		t.Fatalf("Verify: %v\nwant %s", err, want)
	}
	// Defined first, then read: fine.
	b := m.Main.Blocks[0]
	b.Ops[0], b.Ops[1], b.Ops[2] = b.Ops[2], b.Ops[0], b.Ops[1]
	if err := Verify(m); err != nil {
		t.Fatalf("in order: %v", err)
	}
}

// A forward op may write a persistable that is no param without reading
// it (state it keeps, as a QAT observer writes its OutScale each step):
// the base module with batch_norm writing its running mean so verifies.
func TestVerifyForwardWritesState(t *testing.T) {
	m := verifyBase()
	mainOp(m, "batch_norm").Inputs = Slots("X", "h")
	if err := Verify(m); err != nil {
		t.Fatal(err)
	}
}
