package ir

import (
	"errors"
	"fmt"
	"math"
)

// textProblem returns what of m the text format cannot say, as the first
// such thing found, or nil. The JSON decoder refuses what it finds (and
// the encoder too), so that every module read from JSON prints to text
// that parses back to it: "main": null made a module whose text fmt then
// refused. These are exactly the checks of Parse beyond the grammar's:
// a main program, programs named for their slot with blocks and a rank
// of -1 (serial) or more, 32-bit integers wherever the text reads them
// so (ranks, mesh sizes, group ids, block indexes, mappings, lod levels,
// impl indexes, block refs), a lod level of 0 or more, partial dims
// ascending and unique, and no var attribute named as a flag.
func textProblem(m *Module) error {
	if m.Main == nil {
		return errors.New("no main program")
	}
	if err := attrsText("module", m.Attrs); err != nil {
		return err
	}
	for _, pm := range m.Meshes {
		if pm == nil {
			continue // the encoder and decoder name it themselves
		}
		where := "mesh " + quoteName(pm.Name)
		if err := ints32(where, "shape", pm.Shape); err != nil {
			return err
		}
		if err := ints32(where, "ranks", pm.ProcessIDs); err != nil {
			return err
		}
	}
	for _, g := range m.Groups {
		if !fits32(g.ID) {
			return fmt.Errorf("group id %d out of range (the text format's integers here are 32-bit)", g.ID)
		}
		if err := ints32(fmt.Sprintf("group %d", g.ID), "ranks", g.Ranks); err != nil {
			return err
		}
	}
	for _, slot := range [2]struct {
		name string
		p    *Program
	}{{"main", m.Main}, {"startup", m.Startup}} {
		p := slot.p
		if p == nil {
			continue
		}
		if p.Name != slot.name {
			return fmt.Errorf("%s: program is named %s", slot.name, quoteName(p.Name))
		}
		if p.Rank < -1 || !fits32(p.Rank) {
			return fmt.Errorf("%s: rank %d is not -1 (serial) or a rank", slot.name, p.Rank)
		}
		if len(p.Blocks) == 0 {
			return fmt.Errorf("%s: no blocks", slot.name)
		}
		for bi, b := range p.Blocks {
			if b == nil {
				continue
			}
			where := fmt.Sprintf("%s block %d", slot.name, bi)
			if !fits32(b.Parent) || !fits32(b.Forward) {
				return fmt.Errorf("%s: parent %d or forward %d out of range (the text format's integers here are 32-bit)", where, b.Parent, b.Forward)
			}
			for _, v := range b.vars {
				if v == nil {
					continue
				}
				if err := varText(fmt.Sprintf("%s var %q", where, v.name), v); err != nil {
					return err
				}
			}
			for _, op := range b.Ops {
				if op == nil {
					continue
				}
				if err := opText(fmt.Sprintf("%s op %d", where, op.ID), op); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func fits32(x int) bool { return x >= math.MinInt32 && x <= math.MaxInt32 }

// ints32 checks that every entry of xs fits in 32 bits.
func ints32(where, what string, xs []int) error {
	for _, x := range xs {
		if !fits32(x) {
			return fmt.Errorf("%s: %s entry %d out of range (the text format's integers here are 32-bit)", where, what, x)
		}
	}
	return nil
}

func varText(where string, v *Var) error {
	if err := typeText(where, &v.Type); err != nil {
		return err
	}
	if d := v.Dist; d != nil {
		if err := ints32(where, "dims_mapping", d.DimsMapping); err != nil {
			return err
		}
		for i, p := range d.Partial {
			if !fits32(p.Dim) {
				return fmt.Errorf("%s: partial dim %d out of range (the text format's integers here are 32-bit)", where, p.Dim)
			}
			if i > 0 && d.Partial[i-1].Dim >= p.Dim {
				return fmt.Errorf("%s: partial dims must be ascending and unique", where)
			}
		}
		for i, k := range d.Local {
			if !fits32(k) {
				return fmt.Errorf("%s: local dim %d out of range (the text format's integers here are 32-bit)", where, k)
			}
			if i > 0 && d.Local[i-1] >= k {
				return fmt.Errorf("%s: local dims must be ascending and unique", where)
			}
		}
	}
	for _, a := range v.Attrs {
		if _, isFlag := flagByName(a.Name); isFlag {
			return fmt.Errorf("%s: attr %s is named as a flag", where, quoteName(a.Name))
		}
	}
	return attrsText(where, v.Attrs)
}

func typeText(where string, t *Type) error {
	if !fits32(t.LoD) || t.LoD < 0 {
		return fmt.Errorf("%s: lod level %d is negative or out of range", where, t.LoD)
	}
	for i := range t.Elems {
		if err := typeText(where, &t.Elems[i]); err != nil {
			return err
		}
	}
	return nil
}

func opText(where string, op *Op) error {
	if d := op.Dist; d != nil {
		if !fits32(d.ImplIndex) {
			return fmt.Errorf("%s: impl index %d out of range (the text format's integers here are 32-bit)", where, d.ImplIndex)
		}
		for _, side := range [2][]ArgDist{d.Inputs, d.Outputs} {
			for _, a := range side {
				if err := ints32(where, "dist of "+quoteName(a.Name)+": dims_mapping", a.DimsMapping); err != nil {
					return err
				}
			}
		}
	}
	return attrsText(where, op.Attrs)
}

// attrsText checks the block refs of attrs.
func attrsText(where string, as Attrs) error {
	for _, a := range as {
		switch r := a.Value.(type) {
		case BlockRef:
			if !fits32(int(r)) {
				return fmt.Errorf("%s attr %q: block %d out of range (the text format's integers here are 32-bit)", where, a.Name, int(r))
			}
		case BlockRefs:
			if err := ints32(fmt.Sprintf("%s attr %q", where, a.Name), "block", r); err != nil {
				return err
			}
		}
	}
	return nil
}
