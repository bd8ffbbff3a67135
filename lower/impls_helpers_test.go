package lower

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

// testModule returns a module with the 2-D mesh world [2, 2] dims
// [dp, mp] over ranks 0..3 and a builder for its main block. Vars are
// declared with their local shapes, as lowering sees them.
func testModule() (*ir.Module, *ir.Builder) {
	m := ir.NewModule("t")
	b := ir.NewBuilder(m)
	b.Mesh("world", []int{2, 2}, []string{"dp", "mp"}, []int{0, 1, 2, 3})
	return m, b
}

// buildGroups fills the module's group table: group 0 is the world,
// then for each mesh, each axis, each slice in ProcessMesh.Groups order,
// ids 1, 2, ... With world [2, 2]: 1 = [0, 2], 2 = [1, 3] (dp), 3 =
// [0, 1], 4 = [2, 3] (mp).
func buildGroups(m *ir.Module) {
	var world []int
	for _, pm := range m.Meshes {
		world = append(world, pm.ProcessIDs...)
	}
	m.Groups = []ir.Group{{ID: 0, Ranks: world}}
	for _, pm := range m.Meshes {
		for axis := range pm.Shape {
			for _, g := range pm.Groups(axis) {
				m.Groups = append(m.Groups, ir.Group{ID: len(m.Groups), Ranks: g})
			}
		}
	}
}

// lowering is what one impl call emitted on one rank: the main ops, then
// the startup ops, one ir.PrintOp line each.
type lowering struct {
	Main    []string
	Startup []string
}

// lower builds a fresh module with build (which returns the op to lower),
// lowers it on rank with fn and returns the printed result; st, when not
// nil, is applied to the fresh state (e.g. to mark the loss grad seen).
func lower(t *testing.T, build func(b *ir.Builder) *ir.Op, rank int, implType string, implIndex int,
	fn func(*Lowering, *ir.Op) error, st func(*state)) (lowering, error) {
	t.Helper()
	m, b := testModule()
	op := build(b)
	if err := b.Err(); err != nil {
		t.Fatalf("build: %v", err)
	}
	buildGroups(m)
	st0 := newState()
	if st != nil {
		st(st0)
	}
	ctx := newLowering(m, rank, m.Main.Global(), st0)
	ctx.begin(op, m.Mesh(op.Dist.Mesh), implType, implIndex)
	err := fn(ctx, op)
	var l lowering
	for _, o := range ctx.out {
		l.Main = append(l.Main, ir.PrintOp(o))
	}
	if m.Startup != nil {
		for _, o := range m.Startup.Global().Ops {
			l.Startup = append(l.Startup, ir.PrintOp(o))
		}
	}
	return l, err
}

// mustLower is lower for a lowering that must succeed.
func mustLower(t *testing.T, build func(b *ir.Builder) *ir.Op, rank int, implType string, implIndex int,
	fn func(*Lowering, *ir.Op) error, st func(*state)) lowering {
	t.Helper()
	l, err := lower(t, build, rank, implType, implIndex, fn, st)
	if err != nil {
		t.Fatalf("rank %d: %v", rank, err)
	}
	return l
}

// checkLowering compares printed ops with the wanted lines exactly.
func checkLowering(t *testing.T, rank int, got lowering, wantMain, wantStartup []string) {
	t.Helper()
	cmp := func(what string, got, want []string) {
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("rank %d %s:\ngot:\n\t%s\nwant:\n\t%s", rank, what,
				strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
		}
	}
	cmp("main ops", got.Main, wantMain)
	cmp("startup ops", got.Startup, wantStartup)
}

// checkCompat runs the impl's Compatible on a fresh build and wants nil
// (wantErr "") or an error containing wantErr.
func checkCompat(t *testing.T, build func(b *ir.Builder) *ir.Op, impl *Impl, wantErr string) {
	t.Helper()
	m, b := testModule()
	op := build(b)
	if err := b.Err(); err != nil {
		t.Fatalf("build: %v", err)
	}
	buildGroups(m)
	ctx := newLowering(m, 0, m.Main.Global(), newState())
	ctx.begin(op, m.Mesh(op.Dist.Mesh), "t", 0)
	err := impl.Compatible(ctx, op)
	switch {
	case wantErr == "" && err != nil:
		t.Errorf("%s: %v, want compatible", impl.Name, err)
	case wantErr != "" && err == nil:
		t.Errorf("%s: compatible, want an error containing %q", impl.Name, wantErr)
	case wantErr != "" && !strings.Contains(err.Error(), wantErr):
		t.Errorf("%s: error %q, want it to contain %q", impl.Name, err, wantErr)
	}
}

func lossGradSeen(s *state) { s.lossGradSeen = true }

func f32(shape ...int64) ir.Type { return ir.Tensor(ir.F32, shape...) }

// loweringCase is one golden test of a lowering: build a fresh module,
// lower the op with fn on each rank of want, compare the printed ops.
type loweringCase struct {
	name      string
	build     func(b *ir.Builder) *ir.Op
	implType  string
	implIndex int
	fn        func(*Lowering, *ir.Op) error
	state     func(*state)
	want      map[int]lowering
}

func runLoweringCases(t *testing.T, cases []loweringCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := c.want
			if len(want) == 0 {
				if os.Getenv("REGISTRY_DUMP") == "" {
					t.Fatal("no ranks to check")
				}
				want = map[int]lowering{0: {}, 1: {}, 2: {}, 3: {}}
			}
			for r, w := range want {
				got := mustLower(t, c.build, r, c.implType, c.implIndex, c.fn, c.state)
				if os.Getenv("REGISTRY_DUMP") != "" {
					dumpLowering(c.name, r, got)
				}
				checkLowering(t, r, got, w.Main, w.Startup)
			}
		})
	}
}

// dumpLowering prints got as a Go literal, to review and paste as a
// golden when an expected sequence changes on purpose.
func dumpLowering(name string, rank int, got lowering) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "@@%s %d\n%d: {\n", name, rank, rank)
	sb.WriteString("\tMain: []string{\n")
	for _, s := range got.Main {
		fmt.Fprintf(&sb, "\t\t%s,\n", strconv.Quote(s))
	}
	sb.WriteString("\t},\n")
	if len(got.Startup) > 0 {
		sb.WriteString("\tStartup: []string{\n")
		for _, s := range got.Startup {
			fmt.Fprintf(&sb, "\t\t%s,\n", strconv.Quote(s))
		}
		sb.WriteString("\t},\n")
	}
	sb.WriteString("},\n@@end\n")
	fmt.Print(sb.String())
}

// forward is impl's forward lowering as Registry.Lower runs it: Compatible
// first, Forward only for an op it accepts.
func forward(impl *Impl) func(*Lowering, *ir.Op) error {
	return func(ctx *Lowering, op *ir.Op) error {
		if impl.Compatible != nil {
			if err := impl.Compatible(ctx, op); err != nil {
				return err
			}
		}
		return impl.Forward(ctx, op)
	}
}
