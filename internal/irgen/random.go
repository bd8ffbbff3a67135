package irgen

import (
	"math"
	"math/rand/v2"
	"strconv"
	"unicode/utf8"

	"github.com/distpass/distpass/ir"
)

// Random returns a module built from seed that uses every kind of IR
// content: several blocks with parents and forward indices, every attribute
// kind (empty lists, NaN, infinities, -0), every var kind, type kind and
// flag, tensor dists with partial dims of every reduction, op dists with
// recompute, groups, ranks, and names that need quoting. It is not meant to
// verify; it is meant to round-trip.
func Random(seed uint64) *ir.Module {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	return g.module()
}

// RandomUTF8 is Random without the names and strings that are not valid
// UTF-8, which JSON cannot carry.
func RandomUTF8(seed uint64) *ir.Module {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), utf8: true}
	return g.module()
}

type gen struct {
	r    *rand.Rand
	utf8 bool
}

func (g *gen) pick(xs []string) string {
	for {
		s := xs[g.r.IntN(len(xs))]
		if !g.utf8 || utf8.ValidString(s) {
			return s
		}
	}
}

var plainNames = []string{"x", "w1", "h", "h@GRAD", "w1@GRAD", "tmp.0", "layer_3.w", "_b", "Out", "op", "var", "role", "true", "nan"}
var oddNames = []string{"", "with space", "quote\"d", "back\\slash", "tab\there", "ünïcode", "9lives", "a-b", "{x}", "#hash", "new\nline", "\xff\xfe"}

func (g *gen) name() string {
	if g.r.IntN(6) == 0 {
		return g.pick(oddNames)
	}
	return plainNames[g.r.IntN(len(plainNames))] + strconv.Itoa(g.r.IntN(50))
}

func (g *gen) module() *ir.Module {
	m := &ir.Module{Name: g.name()}
	nMesh := 1 + g.r.IntN(3)
	for i := range nMesh {
		nd := 1 + g.r.IntN(3)
		pm := &ir.ProcessMesh{Name: "mesh" + strconv.Itoa(i)}
		n := 1
		for d := range nd {
			s := 1 + g.r.IntN(3)
			pm.Shape = append(pm.Shape, s)
			pm.DimNames = append(pm.DimNames, "d"+strconv.Itoa(d))
			n *= s
		}
		pm.ProcessIDs = g.r.Perm(n)
		m.Meshes = append(m.Meshes, pm)
	}
	for i := range g.r.IntN(4) {
		m.Groups = append(m.Groups, ir.Group{ID: i, Ranks: []int{i, i + 1 + g.r.IntN(3)}})
	}
	m.Main = g.program(m, "main")
	if g.r.IntN(3) > 0 {
		m.Startup = g.program(m, "startup")
	}
	for range g.r.IntN(4) {
		pg := ir.ParamGrad{Param: g.name()}
		if g.r.IntN(4) > 0 {
			pg.Grad = g.name()
		}
		m.ParamGrads = append(m.ParamGrads, pg)
	}
	return m
}

func (g *gen) program(m *ir.Module, name string) *ir.Program {
	p := &ir.Program{Name: name, Rank: -1}
	if g.r.IntN(3) == 0 {
		p.Rank = g.r.IntN(8)
	}
	nb := 1 + g.r.IntN(4)
	for i := range nb {
		parent, fwd := -1, -1
		if i > 0 {
			parent = g.r.IntN(i)
			if g.r.IntN(3) == 0 {
				fwd = g.r.IntN(i)
			}
		}
		b := p.AddBlock(parent)
		b.Forward = fwd
		g.block(m, p, b)
	}
	return p
}

var noShape = []ir.TypeKind{ir.Reader, ir.StepScopes, ir.TensorArray, ir.FeedList, ir.FetchList, ir.Raw}

func (g *gen) block(m *ir.Module, p *ir.Program, b *ir.Block) {
	var names []string
	for range g.r.IntN(8) {
		name := g.name() // drawn before the kind, as the generator always has
		v := new(ir.Var)
		*v = ir.Var{Kind: ir.VarKind(g.r.IntN(3))}.Named(name)
		if b.Var(v.Name()) != nil {
			continue
		}
		if g.r.IntN(6) == 0 {
			v.Type = ir.NoShape(noShape[g.r.IntN(len(noShape))])
		} else {
			shape := make([]int64, g.r.IntN(4))
			for i := range shape {
				shape[i] = int64(g.r.IntN(40)) - 1
			}
			v.Type = ir.Tensor(ir.DType(1+g.r.IntN(10)), shape...)
			if g.r.IntN(2) == 0 {
				pm := m.Meshes[g.r.IntN(len(m.Meshes))]
				v.Dist = &ir.TensorDist{Mesh: pm.Name, DimsMapping: g.mapping(len(shape), len(pm.Shape))}
				for d := range len(pm.Shape) {
					if g.r.IntN(3) == 0 {
						v.Dist.Partial = append(v.Dist.Partial, ir.Partial{Dim: d, Reduce: ir.Reduce(g.r.IntN(4))})
					}
				}
			}
		}
		v.Flags = ir.VarFlags(g.r.IntN(32))
		if g.r.IntN(4) == 0 {
			v.Attrs.Set(g.name(), g.value(p))
		}
		if err := b.AddVar(v); err != nil {
			panic(err)
		}
		names = append(names, v.Name())
	}
	for range g.r.IntN(8) {
		op := &ir.Op{ID: int64(1 + g.r.IntN(1000)), Type: g.name()}
		op.Inputs = g.slots(names)
		op.Outputs = g.slots(names)
		for range g.r.IntN(6) {
			op.Attrs.Set(g.name(), g.value(p))
		}
		roles := []ir.Role{ir.RoleForward, ir.RoleBackward, ir.RoleOptimize, ir.RoleLoss, ir.RoleBackward | ir.RoleLoss,
			ir.RoleOptimize | ir.RoleLRSched, ir.RoleRPC | ir.RoleDist}
		op.Role = roles[g.r.IntN(len(roles))]
		if g.r.IntN(3) == 0 {
			op.Fwd = int64(1 + g.r.IntN(1000))
		}
		if g.r.IntN(2) == 0 {
			pm := m.Meshes[g.r.IntN(len(m.Meshes))]
			d := &ir.OpDist{Mesh: pm.Name, Recompute: g.r.IntN(4) == 0}
			if g.r.IntN(4) > 0 {
				d.ImplType = g.name()
				d.ImplIndex = g.r.IntN(4)
			}
			for _, s := range op.Inputs {
				for _, a := range s.Args {
					d.Inputs = append(d.Inputs, ir.ArgDist{Name: a, DimsMapping: g.mapping(g.r.IntN(4), len(pm.Shape))})
				}
			}
			for _, s := range op.Outputs {
				for _, a := range s.Args {
					d.Outputs = append(d.Outputs, ir.ArgDist{Name: a, DimsMapping: g.mapping(g.r.IntN(4), len(pm.Shape))})
				}
			}
			op.Dist = d
		}
		b.Ops = append(b.Ops, op)
	}
}

func (g *gen) mapping(rank, meshRank int) []int {
	mp := make([]int, rank)
	for i := range mp {
		mp[i] = g.r.IntN(meshRank+1) - 1
	}
	return mp
}

func (g *gen) slots(names []string) []ir.Slot {
	var ss []ir.Slot
	for i := range g.r.IntN(4) {
		s := ir.Slot{Name: []string{"X", "Y", "Out", "X@GRAD", "odd slot"}[i]}
		for range g.r.IntN(3) {
			if len(names) > 0 {
				s.Args = append(s.Args, names[g.r.IntN(len(names))])
			}
		}
		ss = append(ss, s)
	}
	return ss
}

var floats = []float64{0, 1, -1, 0.1, -0.1, 1e-05, 1e21, 123456789.125, math.Pi, math.SmallestNonzeroFloat64,
	math.MaxFloat64, math.Inf(1), math.Inf(-1), math.NaN(), math.Copysign(0, -1), 3}

var strs = []string{"", "a", "with \"quotes\"", "new\nline", "tab\t", "ünï", "\x00\xff", "#not a comment", "}"}

func (g *gen) value(p *ir.Program) ir.Value {
	n := g.r.IntN(6)
	switch g.r.IntN(10) {
	case 0:
		return ir.Bool(g.r.IntN(2) == 0)
	case 1:
		return ir.Int(g.int())
	case 2:
		return ir.Float(g.float())
	case 3:
		return ir.String(g.pick(strs))
	case 4:
		l := make(ir.Bools, n)
		for i := range l {
			l[i] = g.r.IntN(2) == 0
		}
		return l
	case 5:
		l := make(ir.Ints, n)
		for i := range l {
			l[i] = g.int()
		}
		return l
	case 6:
		l := make(ir.Floats, n)
		for i := range l {
			l[i] = g.float()
		}
		return l
	case 7:
		l := make(ir.Strings, n)
		for i := range l {
			l[i] = g.pick(strs)
		}
		return l
	case 8:
		return ir.BlockRef(g.r.IntN(len(p.Blocks) + 2))
	}
	l := make(ir.BlockRefs, n)
	for i := range l {
		l[i] = g.r.IntN(len(p.Blocks) + 2)
	}
	return l
}

func (g *gen) int() int64 {
	switch g.r.IntN(4) {
	case 0:
		return math.MinInt64
	case 1:
		return math.MaxInt64
	}
	return g.r.Int64N(2000) - 1000
}

func (g *gen) float() float64 {
	if g.r.IntN(2) == 0 {
		return floats[g.r.IntN(len(floats))]
	}
	return g.r.NormFloat64() * math.Pow(10, float64(g.r.IntN(40)-20))
}
