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
	"github.com/distpass/distpass/registry"
)

// Partitioning by rank classes. In an SPMD program the ranks' programs
// differ only in a few rank-dependent attrs: the ring_id of a collective
// (the group along a mesh dim is a different slice for each rank) and the
// start_index of a vocab-parallel embedding (the rank's coordinate times
// the local rows). Ranks that belong to the same meshes lower to the same
// structure, so each such class is lowered once, for its first rank, and
// every other rank's program is that one with its own values of those
// attrs (a module that brings its own group table also splits classes by
// membership of group 0, the world group). The contract for impls that
// makes this sound: a lowering depends on the rank only through Lowering.Group
// (ring ids) and Lowering.Coord (embedding offsets), or on what every rank of
// a class shares. Impls promise it by registry.Impl.RankSafe; unless every impl
// the module names does, each class's last rank is also lowered plainly
// and compared by structural hash. A class that fails the comparison,
// holds an attr the relabelling does not know (a send/recv peer), or
// holds a ring_id or start_index equal to the serial op's own (copied
// from the input, or computed: see relabel), is lowered rank by rank
// instead, and says so in Fallback.

// Classes is a partition of every rank of a module, by class.
type Classes struct {
	Classes []*Class
	// Groups is the process-group table every rank shares.
	Groups []ir.Group
	// Checked says whether each class's last rank was lowered plainly and
	// compared with its instantiation; false when every impl the module
	// names is registry.Impl.RankSafe.
	Checked bool
}

// Class is the ranks that lower to the same structure.
type Class struct {
	// Ranks, ascending; Ranks[0] is the representative.
	Ranks []int
	// Module is the representative's partitioned module.
	Module *ir.Module
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
		op.Attrs.Set(s.Attr, c.Values[i][s.Value])
	}
	return m, nil
}

// hashAs is the structural hash of rank Ranks[i]'s module, computed on the
// representative's with the rank's values set and then put back: no
// clone.
func (c *Class) hashAs(i int) uint64 {
	m := c.Module
	saved := make([]ir.Value, len(c.Sites))
	for j, s := range c.Sites {
		op := s.op(m)
		saved[j] = op.Attrs.Get(s.Attr)
		op.Attrs.Set(s.Attr, c.Values[i][s.Value])
	}
	ranks := make([]int, 0, 2)
	for _, p := range m.Programs() {
		ranks = append(ranks, p.Rank)
		p.Rank = c.Ranks[i]
	}
	h := ir.Hash(m)
	for j, s := range c.Sites {
		s.op(m).Attrs.Set(s.Attr, saved[j])
	}
	for k, p := range m.Programs() {
		p.Rank = ranks[k]
	}
	return h
}

// PartitionClasses partitions m for every rank of its meshes by classes
// (see Classes): each class's representative and, for the check, its
// last rank (unless every impl m names is rank-safe) are lowered on
// clones, concurrently; m is not changed.
// progress, when not nil, is called as each lowering finishes.
func PartitionClasses(ctx context.Context, m *ir.Module, reg *registry.Registry, progress func(done, total int)) (*Classes, error) {
	if reg == nil {
		reg = registry.DefaultRegistry()
	}
	ranks := Ranks(m)
	if len(ranks) == 0 {
		return nil, fmt.Errorf("partition-all: the module has no mesh")
	}
	// Class key: which meshes a rank belongs to, and whether it belongs
	// to the world group (id 0) of a group table the module brings: AMP's
	// found_inf is reduced over it, and a rank outside it cannot lower
	// (registry.CheckFiniteAndUnscale). The table the lowering builds
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
	cs := &Classes{Checked: !rankSafe(m, reg)}
	for _, k := range keys {
		cs.Classes = append(cs.Classes, &Class{Ranks: byKey[k]})
	}

	// Lower the representatives and the check ranks.
	type job struct {
		c     *Class
		rank  int
		check bool
	}
	var jobs []job
	for _, c := range cs.Classes {
		jobs = append(jobs, job{c, c.Ranks[0], false})
		if len(c.Ranks) > 1 && cs.Checked {
			jobs = append(jobs, job{c, c.Ranks[len(c.Ranks)-1], true})
		}
	}
	mods, err := lowerRanks(ctx, m, reg, jobs, func(j job) int { return j.rank }, progress)
	if err != nil {
		return nil, err
	}
	checks := map[*Class]*ir.Module{}
	for i, j := range jobs {
		if j.check {
			checks[j.c] = mods[i]
		} else {
			j.c.Module = mods[i]
		}
	}
	cs.Groups = cs.Classes[0].Module.Groups
	for _, c := range cs.Classes {
		// The check module's hash is computed on another core while
		// this one relabels: it reads nothing relabel writes.
		var chkHash uint64
		hashed := make(chan struct{})
		chk := checks[c]
		if chk != nil {
			go func() { defer close(hashed); chkHash = ir.Hash(chk) }()
		} else {
			close(hashed)
		}
		why := c.relabel(m)
		if why == "" && chk != nil {
			mine := c.hashAs(len(c.Ranks) - 1)
			<-hashed
			if mine != chkHash {
				why = fmt.Sprintf("rank %d lowered plainly differs from its class's instantiation: an impl depends on the rank other than through Lowering.Group and Lowering.Coord", c.Ranks[len(c.Ranks)-1])
			}
		}
		<-hashed
		if why != "" {
			c.Fallback = why
		}
		if c.Fallback == "" {
			continue
		}
		c.Plain, err = lowerRanks(ctx, m, reg, c.Ranks, func(r int) int { return r }, nil)
		if err != nil {
			return nil, err
		}
		c.Module, c.Sites, c.Values = nil, nil, nil
	}
	return cs, nil
}

// rankSafe reports whether every impl that lowering m may call is
// registry.Impl.RankSafe: the impl each op's dist names (a grad op's
// forward op names its impl too) and the default impl, which lowers the
// ops that name none. An impl the registry lacks counts as unsafe; the
// lowering reports it.
func rankSafe(m *ir.Module, reg *registry.Registry) bool {
	type key struct {
		typ string
		idx int
	}
	impls := map[key]struct{}{{registry.DefaultType, 0}: {}}
	last := key{registry.DefaultType, 0}
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			if b == nil {
				continue
			}
			for _, op := range b.Ops {
				if op == nil || op.Dist == nil || op.Dist.ImplType == "" {
					continue
				}
				// Neighbouring ops mostly name the same impl: the map is
				// written only when it changes.
				if k := (key{op.Dist.ImplType, op.Dist.ImplIndex}); k != last {
					impls[k], last = struct{}{}, k
				}
			}
		}
	}
	for k := range impls {
		impl, err := reg.Lookup(k.typ, k.idx)
		if err != nil || !impl.RankSafe {
			return false
		}
	}
	return true
}

// lowerRanks partitions a clone of m for the rank of each job,
// concurrently, in job order.
func lowerRanks[J any](ctx context.Context, m *ir.Module, reg *registry.Registry, jobs []J, rankOf func(J) int,
	progress func(done, total int)) ([]*ir.Module, error) {
	out := make([]*ir.Module, len(jobs))
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
		if err := Partition(c, reg, rankOf(jobs[i])); err != nil {
			errs[i] = err
			return
		}
		out[i] = c
	})
	if err := firstError(errs); err != nil {
		return nil, err
	}
	return out, nil
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
func (c *Class) relabel(serial *ir.Module) string {
	m := c.Module
	rep := c.Ranks[0]
	// A rank list's id is its first group's, as registry.Lowering.Group finds
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
			if sv, ok := sop.Attrs.Int(attr); ok && sv == v {
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
				if id, ok := op.Attrs.Int("ring_id"); ra.ringID && ok {
					g := m.Group(int(id))
					if g == nil {
						return fmt.Sprintf("%s op %d %s: ring_id %d is not in the group table", p.Name, op.ID, op.Type, id)
					}
					if slices.Equal(g.Ranks, world) {
						continue // the world's group is every rank's
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
				}
				if (op.Type == "c_embedding" || op.Type == "c_embedding_grad") && ra.startIndex {
					if start, _ := op.Attrs.Int("start_index"); asWritten(p, op, "start_index", start) {
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
// reads W's row axis where the lowering does (registry's vocabShard):
// from the op's dist, on the op's mesh, which may map W otherwise than
// W's own dist does.
func embeddingRecipe(m *ir.Module, p *ir.Program, b *ir.Block, op *ir.Op, rep int) (func(int) (ir.Value, error), recipeKey, string) {
	ws := op.Input("W")
	start, _ := op.Attrs.Int("start_index")
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

// recipeKey names a recipe of relabel: the ring id of the group along
// mesh dim axis of pm, or (embedding) the start_index of rows local rows
// split along it.
type recipeKey struct {
	pm        *ir.ProcessMesh
	axis      int
	rows      int64
	embedding bool
}

// relabeled says which of the attrs relabel reads an op has: peer and
// ring_id when they are ints, start_index of any kind.
type relabeled struct{ peer, ringID, startIndex bool }

func (r relabeled) any() bool { return r.peer || r.ringID || r.startIndex }

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
