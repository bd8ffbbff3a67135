package passes

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/distpass/distpass/internal/par"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/ops"
)

// Partitioning by rank classes. In an SPMD program the ranks' programs
// differ only in what their lowering reads of the rank: the ring_id of a
// collective (the group along a mesh dim is a different slice for each
// rank), the start_index of a vocab-parallel embedding (the rank's
// coordinate times the local rows), and what the impls read through
// lower.Lowering (Rank, Coord, the member order of a gather's group),
// each recorded as a lower.RankRead where it is read. Ranks that
// belong to the same meshes start in one class (a module that brings its
// own group table also splits classes by membership of group 0, the
// world group); a class is lowered for its first rank, and its ranks on
// which some read of that lowering answers otherwise than on the first
// go to new classes, lowered in turn, until every class's ranks answer
// every read of its lowering alike. The lowering is a function of the
// serial module and of the rank through those reads alone, so every rank
// of a class takes the decisions its first rank took: its program is
// that one with its own ring ids and start_index values (relabel), sound
// by construction rather than by a comparison. A class that holds a
// ring_id or start_index equal to the serial op's own (copied from the
// input, or computed: see relabel) is lowered rank by rank instead, and
// says so in Fallback.

// Classes is a partition of every rank of a module, by class.
type Classes struct {
	Classes []*Class
	// Groups is the process-group table every rank shares.
	Groups []ir.Group
}

// Class is the ranks that lower to the same structure.
type Class struct {
	// Ranks, ascending; Ranks[0] is the representative.
	Ranks []int
	// Module is the representative's partitioned module.
	Module *ir.Module
	// Reads is what its lowering read of the rank, which every rank of
	// the class answers alike.
	Reads []lower.RankRead
	// Sites are the rank-dependent attrs of Module. Many share a value
	// (every collective over the same mesh dim): Site.Value indexes
	// Values[i], the distinct values of rank Ranks[i].
	Sites  []Site
	Values [][]ir.Value
	// Fallback, when not empty, says why this class was lowered rank by
	// rank; Plain then holds the module of each rank.
	Fallback string
	Plain    []*ir.Module
}

// Site is one rank-dependent attr of a class's representative program:
// attr Attr of op OpID in program Program, whose value on rank Ranks[i]
// is Values[i][Value].
type Site struct {
	Program string
	OpID    int64
	Attr    string
	Value   int

	blk, pos int // where the op stands in its program: the same in a clone
}

// op finds the site's op in m, a clone of the representative's module.
func (s Site) op(m *ir.Module) *ir.Op {
	for _, p := range m.Programs() {
		if p.Name == s.Program && s.blk < len(p.Blocks) && s.pos < len(p.Blocks[s.blk].Ops) {
			return p.Blocks[s.blk].Ops[s.pos]
		}
	}
	return nil
}

// Ranks returns every rank of every class, ascending.
func (cs *Classes) Ranks() []int {
	var rs []int
	for _, c := range cs.Classes {
		rs = append(rs, c.Ranks...)
	}
	slices.Sort(rs)
	return rs
}

// Module builds rank's partitioned module: a clone of its class's
// representative with the rank's values of the sites, or the plain module
// of a fallback class. The result is the caller's.
func (cs *Classes) Module(rank int) (*ir.Module, error) {
	for _, c := range cs.Classes {
		i := slices.Index(c.Ranks, rank)
		if i < 0 {
			continue
		}
		if c.Fallback != "" {
			return c.Plain[i].Clone(), nil
		}
		return c.instantiate(i)
	}
	return nil, fmt.Errorf("rank %d is in no class", rank)
}

func (c *Class) instantiate(i int) (*ir.Module, error) {
	m := c.Module.Clone()
	rank := c.Ranks[i]
	for _, p := range m.Programs() {
		p.Rank = rank
	}
	if i == 0 {
		return m, nil
	}
	for _, s := range c.Sites {
		op := s.op(m)
		if op == nil || op.ID != s.OpID {
			return nil, fmt.Errorf("rank %d: %s op %d is gone", rank, s.Program, s.OpID)
		}
		v := c.Values[i][s.Value]
		if ints, ok := v.(ir.Ints); ok {
			v = slices.Clone(ints) // the module's own: the next one shares none
		}
		op.Attrs.Set(s.Attr, v)
	}
	return m, nil
}

// PartitionClasses partitions m for every rank of its meshes by classes
// (see Classes): each class's representative is lowered on a clone,
// concurrently, and its ranks that answer some read of that lowering
// otherwise go on to classes of their own; m is not changed. progress,
// when not nil, is called as each lowering finishes, with the lowerings
// known so far as the total.
func PartitionClasses(ctx context.Context, m *ir.Module, reg *lower.Registry, progress func(done, total int)) (*Classes, error) {
	if reg == nil {
		reg = lower.DefaultRegistry()
	}
	ranks := Ranks(m)
	if len(ranks) == 0 {
		return nil, fmt.Errorf("partition-all: the module has no mesh")
	}
	// Class key: which meshes a rank belongs to, and whether it belongs
	// to the world group (id 0) of a group table the module brings: AMP's
	// found_inf is reduced over it, and a rank outside it cannot lower
	// (lower.CheckFiniteAndUnscale). The table the lowering builds
	// when the module has none holds every rank in group 0.
	world := m.Group(0)
	var keys []string
	byKey := map[string][]int{}
	for _, r := range ranks {
		var sb strings.Builder
		for _, pm := range m.Meshes {
			if pm.Contains(r) {
				sb.WriteByte('1')
			} else {
				sb.WriteByte('0')
			}
		}
		if world != nil && !slices.Contains(world.Ranks, r) {
			sb.WriteByte('w')
		}
		k := sb.String()
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], r)
	}
	var todo []*Class
	for _, k := range keys {
		todo = append(todo, &Class{Ranks: byKey[k]})
	}
	// Lower the representatives; split off the ranks that answer a read
	// otherwise, and lower those classes' representatives in turn.
	cs := &Classes{}
	done, total := 0, len(todo)
	for len(todo) > 0 {
		mods, reads, err := lowerRanks(ctx, m, reg, todo, func(c *Class) int { return c.Ranks[0] }, func(int, int) {
			if progress != nil {
				done++
				progress(done, total)
			}
		})
		if err != nil {
			return nil, err
		}
		var next []*Class
		for i, c := range todo {
			c.Module, c.Reads = mods[i], reads[i].reads
			rest, err := c.split()
			if err != nil {
				return nil, err
			}
			cs.Classes = append(cs.Classes, c)
			next = append(next, rest...)
		}
		total += len(next)
		todo = next
	}
	slices.SortFunc(cs.Classes, func(a, b *Class) int { return a.Ranks[0] - b.Ranks[0] })
	cs.Groups = cs.Classes[0].Module.Groups
	// Mesh.Coord looks a rank up among the mesh's ids: over every rank of
	// a large mesh that is quadratic, so each mesh's coordinates are
	// listed once, by id (and by name: each class has its own module),
	// when a random op's recipe first needs them.
	coords := map[string]map[int][]int{}
	coordsOf := func(pm *ir.ProcessMesh) map[int][]int {
		t, ok := coords[pm.Name]
		if !ok {
			t = make(map[int][]int, len(pm.ProcessIDs))
			for i, id := range pm.ProcessIDs {
				c := make([]int, len(pm.Shape))
				for d, k := len(pm.Shape)-1, i; d >= 0; d-- {
					c[d], k = k%pm.Shape[d], k/pm.Shape[d]
				}
				t[id] = c
			}
			coords[pm.Name] = t
		}
		return t
	}
	for _, c := range cs.Classes {
		if len(c.Ranks) == 1 {
			continue // its own lowering: nothing to relabel
		}
		c.Fallback = c.relabel(m, coordsOf)
		if c.Fallback == "" {
			continue
		}
		var err error
		c.Plain, _, err = lowerRanks(ctx, m, reg, c.Ranks, func(r int) int { return r }, nil)
		if err != nil {
			return nil, err
		}
		c.Module, c.Sites, c.Values = nil, nil, nil
	}
	return cs, nil
}

// split keeps in c the ranks that answer every read of its
// representative's lowering as the representative does, and returns the
// other ranks as classes, one per set of answers, in the order of their
// first rank.
func (c *Class) split() ([]*Class, error) {
	if len(c.Reads) == 0 || len(c.Ranks) == 1 {
		return nil, nil
	}
	var keys []string
	byKey := map[string][]int{}
	for _, r := range c.Ranks {
		var sb strings.Builder
		for _, rd := range c.Reads {
			v, err := rd.Of(r)
			if err != nil {
				return nil, fmt.Errorf("rank %d: %s: %v", r, rd, err)
			}
			sb.WriteString(v)
			sb.WriteByte(';')
		}
		k := sb.String()
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], r)
	}
	c.Ranks = byKey[keys[0]]
	var rest []*Class
	for _, k := range keys[1:] {
		rest = append(rest, &Class{Ranks: byKey[k]})
	}
	return rest, nil
}

// rankReads collects, over the lowering passes of one rank's partition,
// what the impls read of the rank (lower.Registry.Lower):
// PartitionClasses splits a class by the answers. It travels in the
// context.Context the pass manager hands each pass (Context embeds it),
// so that the passes need no channel of their own; a run without one
// records nothing.
type rankReads struct{ reads []lower.RankRead }

type rankReadsKey struct{}

// lowerPhase runs one lowering phase on m, adding its rank reads to the
// record ctx carries, if any.
func lowerPhase(ctx context.Context, m *ir.Module, reg *lower.Registry, phase lower.Phase) error {
	reads, err := reg.Lower(m, phase)
	if rec, ok := ctx.Value(rankReadsKey{}).(*rankReads); ok {
		for _, r := range reads {
			if !slices.Contains(rec.reads, r) {
				rec.reads = append(rec.reads, r)
			}
		}
	}
	return err
}

// lowerRanks partitions a clone of m for the rank of each job,
// concurrently, in job order, with each one's rank reads.
func lowerRanks[J any](ctx context.Context, m *ir.Module, reg *lower.Registry, jobs []J, rankOf func(J) int,
	progress func(done, total int)) ([]*ir.Module, []rankReads, error) {
	out := make([]*ir.Module, len(jobs))
	reads := make([]rankReads, len(jobs))
	errs := make([]error, len(jobs))
	var mu sync.Mutex // orders the progress calls
	done := 0
	par.Do(len(jobs), 0, func(i int) {
		defer func() {
			if progress != nil {
				mu.Lock()
				done++
				progress(done, len(jobs))
				mu.Unlock()
			}
		}()
		if err := ctx.Err(); err != nil {
			errs[i] = err
			return
		}
		c := m.Clone()
		if err := partition(context.WithValue(ctx, rankReadsKey{}, &reads[i]), c, reg, rankOf(jobs[i])); err != nil {
			errs[i] = err
			return
		}
		out[i] = c
	})
	if err := firstError(errs); err != nil {
		return nil, nil, err
	}
	return out, reads, nil
}

// firstError is the error of the first job that failed: every rank's
// lowering of a bad module fails alike, and one rank's says it.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// relabel finds the representative's rank-dependent attrs and computes
// their value on every rank of the class, or says why it cannot. serial
// is the module the class was lowered from: an attr that holds the
// serial op's own value may have been copied from it (the default impl
// keeps an op as written, a ring_id or start_index included) and is then
// the same on every rank, or computed for the rank and equal by chance.
// Only the lowering knows which, and the check rank need not tell them
// apart (its value may equal the representative's), so such a class is
// lowered rank by rank.
func (c *Class) relabel(serial *ir.Module, coordsOf func(*ir.ProcessMesh) map[int][]int) string {
	m := c.Module
	rep := c.Ranks[0]
	// A rank list's id is its first group's, as lower.Lowering.Group finds
	// it: a group table read from the input may list the same ranks twice.
	groupID := map[string]int{}
	for _, g := range m.Groups {
		k := ranksKey(g.Ranks)
		if _, ok := groupID[k]; !ok {
			groupID[k] = g.ID
		}
	}
	world := Ranks(m)
	type recipe func(rank int) (ir.Value, error)
	// Recipes are few (one per mesh dim for ring ids, one per embedding
	// shard shape), sites many: each site names its recipe, made once.
	var recipes []recipe
	recipeOf := map[recipeKey]int{}
	var blk, pos int // of the op being looked at
	// The serial ops that hold an attr relabel rewrites, by program and
	// id (ids are kept by lowering, and fresh ones are above them all),
	// indexed when the first site asks.
	type opKey struct {
		prog string
		id   int64
	}
	var serialOps map[opKey][]*ir.Op
	asWritten := func(p *ir.Program, op *ir.Op, attr string, v int64) bool {
		if serialOps == nil {
			serialOps = map[opKey][]*ir.Op{}
			for _, sp := range serial.Programs() {
				for _, sb := range sp.Blocks {
					for _, sop := range sb.Ops {
						if relabelAttrs(sop).any() {
							k := opKey{sp.Name, sop.ID}
							serialOps[k] = append(serialOps[k], sop)
						}
					}
				}
			}
		}
		for _, sop := range serialOps[opKey{p.Name, op.ID}] {
			if sv, ok := ir.AsInt(ops.AttrValue(sop, attr)); ok && sv == v {
				return true
			}
		}
		return false
	}
	type axisKey struct {
		mesh string
		id   int64
	}
	type meshAxis struct {
		pm   *ir.ProcessMesh
		axis int
	}
	axes := map[axisKey]meshAxis{}
	// site records attr of op as set by the recipe of key, made by
	// newRecipe when no site has used key yet.
	site := func(p *ir.Program, op *ir.Op, attr string, key recipeKey, newRecipe func() recipe) {
		k, ok := recipeOf[key]
		if !ok {
			k = len(recipes)
			recipeOf[key] = k
			recipes = append(recipes, newRecipe())
		}
		if len(c.Sites) == cap(c.Sites) {
			// Doubling: append grows a long slice by a quarter, which
			// copies a million-op module's sites five times over.
			c.Sites = slices.Grow(c.Sites, max(len(c.Sites), 256))
		}
		c.Sites = append(c.Sites, Site{Program: p.Name, OpID: op.ID, Attr: attr, Value: k, blk: blk, pos: pos})
	}
	for _, p := range m.Programs() {
		for bi, b := range p.Blocks {
			for oi, op := range b.Ops {
				blk, pos = bi, oi
				ra := relabelAttrs(op)
				if !ra.any() {
					continue
				}
				if ra.peer {
					return fmt.Sprintf("%s op %d %s has a peer attr: point-to-point ops are not relabelled", p.Name, op.ID, op.Type)
				}
				// A ring id is one of the op's rank-dependent attrs: its
				// verdict ends this one's, not the op's (a random op may
				// carry a ring_id and a shard_offset).
				if why := func() string {
					id, ok := ir.AsInt(ops.AttrValue(op, "ring_id"))
					if !ra.ringID || !ok {
						return ""
					}
					g := m.Group(int(id))
					if g == nil {
						return fmt.Sprintf("%s op %d %s: ring_id %d is not in the group table", p.Name, op.ID, op.Type, id)
					}
					if slices.Equal(g.Ranks, world) {
						return "" // the world's group is every rank's
					}
					if asWritten(p, op, "ring_id", id) {
						return fmt.Sprintf("%s op %d %s: ring_id %d is as the serial op has it: copied, or computed for rank %d", p.Name, op.ID, op.Type, id, rep)
					}
					// The answer depends on the op only through its mesh:
					// remembered per mesh and ring id, as sites are many.
					ak := axisKey{id: id}
					if op.Dist != nil {
						ak.mesh = op.Dist.Mesh
					}
					ga, ok := axes[ak]
					if !ok {
						ga.pm, ga.axis = groupAxis(m, op, g.Ranks, rep)
						axes[ak] = ga
					}
					pm, axis := ga.pm, ga.axis
					if pm == nil {
						return fmt.Sprintf("%s op %d %s: ring_id %d %v is no mesh dim's group of rank %d", p.Name, op.ID, op.Type, id, g.Ranks, rep)
					}
					site(p, op, "ring_id", recipeKey{pm: pm, axis: axis}, func() recipe {
						return func(r int) (ir.Value, error) {
							rs, err := pm.Group(axis, r)
							if err != nil {
								return nil, err
							}
							id, ok := groupID[ranksKey(rs)]
							if !ok {
								return nil, fmt.Errorf("group %v is not in the group table", rs)
							}
							return ir.Int(int64(id)), nil
						}
					})
					return ""
				}(); why != "" {
					return why
				}
				if ra.shardOffset {
					rec, key, why := drawRecipe(m, p, b, op, rep, coordsOf)
					if why != "" {
						return why
					}
					site(p, op, "shard_offset", key, func() recipe { return rec })
				}
				if ops.Has(op.Type, ops.RankStart) && ra.startIndex {
					if start, _ := ir.AsInt(ops.AttrValue(op, "start_index")); asWritten(p, op, "start_index", start) {
						return fmt.Sprintf("%s op %d %s: start_index %d is as the serial op has it: copied, or computed for rank %d", p.Name, op.ID, op.Type, start, rep)
					}
					rec, key, why := embeddingRecipe(m, p, b, op, rep)
					if why != "" {
						return why
					}
					site(p, op, "start_index", key, func() recipe { return rec })
				}
			}
		}
	}
	c.Values = make([][]ir.Value, len(c.Ranks))
	for i, r := range c.Ranks {
		c.Values[i] = make([]ir.Value, len(recipes))
		for j, rec := range recipes {
			v, err := rec(r)
			if err != nil {
				return fmt.Sprintf("rank %d: %v", r, err)
			}
			c.Values[i][j] = v
		}
	}
	return ""
}

// groupAxis finds the mesh dim whose group of rank is ranks: on the op's
// mesh first, then on every mesh.
func groupAxis(m *ir.Module, op *ir.Op, ranks []int, rank int) (*ir.ProcessMesh, int) {
	meshes := slices.Clone(m.Meshes)
	if op.Dist != nil {
		if pm := m.Mesh(op.Dist.Mesh); pm != nil {
			meshes = append([]*ir.ProcessMesh{pm}, meshes...)
		}
	}
	for _, pm := range meshes {
		if !pm.Contains(rank) {
			continue
		}
		for axis := range pm.Shape {
			if g, err := pm.Group(axis, rank); err == nil && slices.Equal(g, ranks) {
				return pm, axis
			}
		}
	}
	return nil, 0
}

// embeddingRecipe is start_index = the rank's coordinate along W's row
// axis × W's local rows, checked against the representative's value. It
// reads W's row axis where the lowering does (lower's vocabShard):
// from the op's dist, on the op's mesh, which may map W otherwise than
// W's own dist does.
func embeddingRecipe(m *ir.Module, p *ir.Program, b *ir.Block, op *ir.Op, rep int) (func(int) (ir.Value, error), recipeKey, string) {
	ws := op.Input("W")
	start, _ := ir.AsInt(ops.AttrValue(op, "start_index"))
	var w *ir.Var
	var wm []int
	var pm *ir.ProcessMesh
	if len(ws) == 1 && op.Dist != nil {
		w = p.LookupVar(b, ws[0])
		pm = m.Mesh(op.Dist.Mesh)
		var ok bool
		if wm, ok = op.Dist.InputMapping(ws[0]); !ok {
			wm, _ = op.Dist.OutputMapping(ws[0])
		}
	}
	if w == nil || pm == nil || len(wm) == 0 || wm[0] < 0 || wm[0] >= len(pm.Shape) || w.Type.Rank() == 0 {
		return nil, recipeKey{}, fmt.Sprintf("%s op %d %s: its W is not a row-split arg", p.Name, op.ID, op.Type)
	}
	axis, rows := wm[0], w.Type.Shape[0]
	rec := func(r int) (ir.Value, error) {
		coord, err := pm.Coord(r)
		if err != nil {
			return nil, err
		}
		return ir.Int(int64(coord[axis]) * rows), nil
	}
	if v, err := rec(rep); err != nil || v != ir.Int(start) {
		return nil, recipeKey{}, fmt.Sprintf("%s op %d %s: start_index %d is not rank %d's coordinate times %d rows", p.Name, op.ID, op.Type, start, rep, rows)
	}
	return rec, recipeKey{pm: pm, axis: axis, rows: rows, embedding: true}, ""
}

// drawRecipe is shard_offset = where the rank's block of the var a random
// op draws for begins (lower.DrawOffset), checked against the
// representative's value.
func drawRecipe(m *ir.Module, p *ir.Program, b *ir.Block, op *ir.Op, rep int, coordsOf func(*ir.ProcessMesh) map[int][]int) (func(int) (ir.Value, error), recipeKey, string) {
	v, pm, mapping, ok := lower.DrawnBlock(m, p, b, op)
	if !ok {
		return nil, recipeKey{}, fmt.Sprintf("%s op %d %s: has a shard_offset but draws for no split var", p.Name, op.ID, op.Type)
	}
	local := slices.Clone(v.Type.Shape)
	mapping = slices.Clone(mapping)
	coords := coordsOf(pm)
	rec := func(r int) (ir.Value, error) {
		c, ok := coords[r]
		if !ok {
			return nil, fmt.Errorf("rank %d is not in mesh %s", r, pm.Name)
		}
		return lower.DrawOffset(c, mapping, local)
	}
	got, _ := ir.AsInts(ops.AttrValue(op, "shard_offset"))
	if want, err := rec(rep); err != nil || !slices.Equal([]int64(want.(ir.Ints)), got) {
		return nil, recipeKey{}, fmt.Sprintf("%s op %d %s: shard_offset %v is not rank %d's block of %s", p.Name, op.ID, op.Type, got, rep, v.Name())
	}
	return rec, recipeKey{pm: pm, draw: fmt.Sprint(mapping, local)}, ""
}

// recipeKey names a recipe of relabel: the ring id of the group along
// mesh dim axis of pm, or (embedding) the start_index of rows local rows
// split along it.
type recipeKey struct {
	pm        *ir.ProcessMesh
	axis      int
	rows      int64
	embedding bool
	draw      string // a random op's split: its mapping and local shape
}

// relabeled says which of the attrs relabel reads an op has: peer and
// ring_id when they are ints, start_index of any kind.
type relabeled struct{ peer, ringID, startIndex, shardOffset bool }

func (r relabeled) any() bool { return r.peer || r.ringID || r.startIndex || r.shardOffset }

// relabelAttrs reads op's attrs once for relabel, which looks at every
// op of a module and acts on few: three lookups each cost more.
func relabelAttrs(op *ir.Op) relabeled {
	var r relabeled
	for i := range op.Attrs {
		a := &op.Attrs[i]
		switch a.Name {
		case "peer":
			_, r.peer = a.Value.(ir.Int)
		case "ring_id":
			_, r.ringID = a.Value.(ir.Int)
		case "start_index":
			r.startIndex = true
		case "shard_offset":
			r.shardOffset = true
		}
	}
	return r
}

func ranksKey(rs []int) string {
	var sb strings.Builder
	for i, r := range rs {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Itoa(r))
	}
	return sb.String()
}
