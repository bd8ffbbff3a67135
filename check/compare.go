package check

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/sim"
)

// DefaultTol is the tolerance a var of dtype dt is compared with when
// Options.Tol is 0: a few times the largest relative error (see Floor)
// that checks of distpass's own partitions reach in that precision, so
// that rounding passes and a lowering off by a scale, a missing reduction
// or a wrong block fails. Integers and bools compare exactly.
func DefaultTol(dt ir.DType) float64 {
	switch {
	case dt == ir.F16 || dt == ir.BF16:
		return 1e-2
	case dt == ir.F32:
		return 1e-4
	case dt.IsFloat():
		return 1e-6
	}
	return 0
}

// Floor is the magnitude below which an error counts as absolute: the
// relative error of element i is |got - want| / max(|want|, Floor(dt)).
// Without it, a value that cancels to nearly zero (a sum of terms of
// either sign) would have to carry its terms' rounding relative to
// itself.
func Floor(dt ir.DType) float64 {
	switch {
	case dt.IsFloat():
		return 1e-2
	}
	return 1
}

// checkPlacement holds every part to the serial module's placement: a mesh
// the serial module declares must be declared alike (shape, dim names,
// ranks in order), and a var of a serial global block that a part
// declares in its own must have the serial dist (mesh, mapping, partial
// state). A part that recomputes another rank's block, or hides a missing
// reduction by declaring a var partial, is so refused by name.
func checkPlacement(m *ir.Module, ranks []int, mods []*ir.Module) error {
	for i, pm := range mods {
		r := ranks[i]
		for _, mesh := range pm.Meshes {
			sm := m.Mesh(mesh.Name)
			if sm == nil {
				continue // the part's own (a pipeline move's): no serial var is on it
			}
			if meshString(mesh) != meshString(sm) {
				return fmt.Errorf("rank %d: mesh %s is %s, the serial module's is %s", r, mesh.Name, meshString(mesh), meshString(sm))
			}
		}
		for _, p := range pm.Programs() {
			sp := m.Main
			if p.Name == "startup" {
				sp = m.Startup
			}
			if sp == nil {
				continue
			}
			sg := sp.Global()
			for _, v := range p.Global().Vars() {
				sv := sg.Var(v.Name())
				if sv == nil || !sv.Type.IsTensor() {
					continue
				}
				if distString(v.Dist) != distString(sv.Dist) {
					hint := ""
					if sv.Dist == nil {
						hint = ": the serial module must be the annotated one the parts were partitioned from (complete it first)"
					}
					return fmt.Errorf("rank %d: %s var %s is %s, the serial module has it %s%s", r, p.Name, v.Name(), distString(v.Dist), distString(sv.Dist), hint)
				}
			}
		}
	}
	return nil
}

func meshString(pm *ir.ProcessMesh) string {
	return fmt.Sprintf("shape %v dims %v ranks %v", pm.Shape, pm.DimNames, pm.ProcessIDs)
}

func distString(d *ir.TensorDist) string {
	if d == nil {
		return "without a dist"
	}
	return d.String()
}

// comparer compares the values of the ranks with the serial ones, var by
// var, and keeps a row per var over every comparison.
type comparer struct {
	m        *ir.Module
	ranks    []int
	mods     []*ir.Module
	tol      float64
	perRank  []string // each rank's own: not compared
	rows     map[string]*Row
	keys     []string // of rows (kind, var), in the order first compared
	replicas int
}

// compare compares var c after step (0: the startups): every rank the
// serial placement puts a block of it on must hold that block, within the
// tolerance (exactly, for a startup value), and the ranks holding the same
// block must hold it bit for bit alike.
func (c *comparer) compare(cv comparedVar, step int, serial sim.Scope, scopes []sim.Scope) error {
	if slices.Contains(c.perRank, cv.name) {
		return nil
	}
	want := serial[cv.name]
	v := serialVar(c.m, cv.name)
	if want == nil || v == nil || !v.Type.IsTensor() {
		return nil // not computed by the serial step (a branch not taken)
	}
	var mesh *ir.ProcessMesh
	if v.Dist != nil {
		if mesh = c.m.Mesh(v.Dist.Mesh); mesh == nil {
			return fmt.Errorf("%s: unknown mesh %s", cv.name, v.Dist.Mesh)
		}
	}
	if c.rows == nil {
		c.rows = map[string]*Row{}
	}
	key := cv.kind + " " + cv.name
	row := c.rows[key]
	if row == nil {
		row = &Row{Var: cv.name, Kind: cv.kind, Rank: -1, Tol: c.tol}
		if cv.kind == "startup" {
			row.Tol = 0
		} else if row.Tol == 0 {
			row.Tol = DefaultTol(want.DType)
		}
		c.rows[key] = row
		c.keys = append(c.keys, key)
	}
	fail := func(r int, why string) {
		if row.Rank < 0 {
			row.Rank, row.Step, row.Hint = r, step, why
		}
	}
	local := map[int]*sim.Tensor{}
	for i, r := range c.ranks {
		if t := scopes[i][cv.name]; t != nil && declared(c.mods[i], cv.name) != nil {
			local[r] = t
		}
	}
	whole := v
	if v.Dist.IsPartial() {
		w := *v
		w.Dist = &ir.TensorDist{Mesh: v.Dist.Mesh, DimsMapping: v.Dist.DimsMapping}
		whole = &w
	}
	floor := Floor(want.DType)
	for _, r := range c.ranks {
		if !placedOn(c.m, v, r) {
			continue
		}
		got := local[r]
		if got == nil {
			where := "every rank"
			if mesh != nil {
				where = "mesh " + mesh.Name
			}
			return fmt.Errorf("rank %d holds no %s %s after %s, which the serial module places on %s", r, cv.kind, cv.name, stepName(step), where)
		}
		exp, err := shardOf(c.m, whole, want, r)
		if err != nil {
			return fmt.Errorf("rank %d: %s: %w", r, cv.name, err)
		}
		if v.Dist.IsPartial() {
			if got, err = sim.ReducePartial(local, v.Dist, mesh, r); err != nil {
				return fmt.Errorf("rank %d: %s: %w", r, cv.name, err)
			}
		}
		abs, rel, err := diff(got, exp, floor)
		if err != nil {
			return fmt.Errorf("rank %d: %s after %s: %w", r, cv.name, stepName(step), err)
		}
		row.Ranks++
		row.MaxAbs, row.MaxRel = max(row.MaxAbs, abs), max(row.MaxRel, rel)
		if rel > row.Tol || (row.Tol == 0 && abs > 0) {
			fail(r, "")
		}
	}
	c.checkReplicas(v, mesh, local, fail)
	return nil
}

// checkReplicas compares, bit for bit, the value of each rank with that of
// the first rank holding the same block of v: the ranks whose coordinates
// agree along every mesh dim v is split or partial over.
func (c *comparer) checkReplicas(v *ir.Var, mesh *ir.ProcessMesh, local map[int]*sim.Tensor, fail func(int, string)) {
	first := map[string]int{}
	for _, r := range c.ranks {
		t := local[r]
		if t == nil || !placedOn(c.m, v, r) {
			continue
		}
		key := ""
		if mesh != nil {
			coord, err := mesh.Coord(r)
			if err != nil {
				continue
			}
			var sb strings.Builder
			for axis, x := range coord {
				if slices.Contains(v.Dist.DimsMapping, axis) || slices.ContainsFunc(v.Dist.Partial, func(p ir.Partial) bool { return p.Dim == axis }) {
					sb.WriteString(strconv.Itoa(x))
				}
				sb.WriteByte(',')
			}
			key = sb.String()
		}
		q, ok := first[key]
		if !ok {
			first[key] = r
			continue
		}
		c.replicas++
		if !sim.Equal(t, local[q]) {
			fail(r, fmt.Sprintf("rank %d's value differs from rank %d's, which holds the same block: replicas must be equal bit for bit", r, q))
		}
	}
}

// diff returns the largest |got - want| and the largest
// |got - want| / max(|want|, floor), elementwise; a NaN where the other
// is not counts as an infinite error.
func diff(got, want *sim.Tensor, floor float64) (float64, float64, error) {
	if len(got.Data) != len(want.Data) || !slices.Equal(got.Shape, want.Shape) {
		return 0, 0, fmt.Errorf("shape %v, want %v", got.Shape, want.Shape)
	}
	var abs, rel float64
	for i := range got.Data {
		g, w := got.Data[i], want.Data[i]
		d := math.Abs(g - w)
		switch {
		case math.IsNaN(g) && math.IsNaN(w), g == w:
			d = 0
		case math.IsNaN(d):
			d = math.Inf(1)
		}
		abs = max(abs, d)
		rel = max(rel, d/max(math.Abs(w), floor))
	}
	return abs, rel, nil
}
