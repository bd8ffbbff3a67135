package paddle

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"

	"github.com/distpass/distpass/ir"
)

// checkModule checks the sidecar's header and the integers of its tables:
// the text format holds ranks, mesh sizes, group ids and mappings as
// 32-bit integers, and a sidecar (JSON, 64-bit) must not import what the
// text cannot say.
func checkModule(doc *sidecarDoc) error {
	if doc.Format != sidecarFormat {
		return fmt.Errorf("format %q, want %q", doc.Format, sidecarFormat)
	}
	if doc.Version != sidecarVersion {
		return fmt.Errorf("unsupported version %d (want %d)", doc.Version, sidecarVersion)
	}
	for i, pm := range doc.Meshes {
		if pm == nil {
			return fmt.Errorf("mesh %d is null", i)
		}
		where := "mesh " + strconv.Quote(pm.Name)
		if err := int32s(where, "shape", pm.Shape, 0); err != nil {
			return err
		}
		if err := int32s(where, "ranks", pm.Ranks, 0); err != nil {
			return err
		}
	}
	for i, g := range doc.Groups {
		if g == nil {
			return fmt.Errorf("group %d is null", i)
		}
		if !inInt32(g.ID, math.MinInt32) {
			return fmt.Errorf("group id %d is out of range (a 32-bit integer)", g.ID)
		}
		if err := int32s(fmt.Sprintf("group %d", g.ID), "ranks", g.Ranks, 0); err != nil {
			return err
		}
	}
	for i, pg := range doc.ParamGrads {
		if pg == nil {
			return fmt.Errorf("param_grads entry %d is null", i)
		}
	}
	if doc.Main != nil && (doc.Main.Program != nil || doc.Main.Separate) {
		return errors.New(`main: the main program is the ProgramDesc, not "program" or "separate"`)
	}
	if s := doc.Startup; s != nil && s.Separate && s.Program != nil {
		return errors.New(`startup: "separate" and "program" do not go together`)
	}
	return nil
}

// inInt32 reports whether x is a 32-bit integer of at least lo.
func inInt32(x int, lo int64) bool { return int64(x) >= lo && int64(x) <= math.MaxInt32 }

// int32s checks that every entry of xs is a 32-bit integer of at least lo.
func int32s(where, what string, xs []int, lo int64) error {
	for _, x := range xs {
		if !inInt32(x, lo) {
			return fmt.Errorf("%s: %s entry %d is out of range (%d to %d)", where, what, x, lo, math.MaxInt32)
		}
	}
	return nil
}

// applier applies a sidecar to the module its ProgramDescs made, and
// says where a disagreement is: side is the sidecar's file name, files
// the main and the startup program's.
type applier struct {
	side  string
	files [2]string
}

func (a *applier) errf(format string, args ...any) error {
	return fmt.Errorf("%s: %s", a.side, fmt.Sprintf(format, args...))
}

// module applies the module-level tables. The sidecar's module attrs
// replace the module's, but those a ProgramDesc holds (paddle.version and
// the like, of either file) must have the file's values.
func (a *applier) module(m *ir.Module, doc *sidecarDoc) error {
	m.Name = doc.Module
	for _, pm := range doc.Meshes {
		m.Meshes = append(m.Meshes, &ir.ProcessMesh{Name: pm.Name, Shape: orNone(pm.Shape), DimNames: orNone(pm.Dims), ProcessIDs: orNone(pm.Ranks)})
	}
	for _, g := range doc.Groups {
		m.Groups = append(m.Groups, ir.Group{ID: g.ID, Ranks: orNone(g.Ranks)})
	}
	for _, pg := range doc.ParamGrads {
		m.ParamGrads = append(m.ParamGrads, ir.ParamGrad{Param: pg.Param, Grad: pg.Grad})
	}
	if doc.Attrs == nil {
		return nil
	}
	as, err := ir.DecodeAttrsJSON(doc.Attrs)
	if err != nil {
		return a.errf("module attrs: %v", err)
	}
	for _, at := range as {
		if err := blockRefs32(at); err != nil {
			return a.errf("module attr %s: %v", at.Name, err)
		}
	}
	for _, facts := range [2]fileFacts{mainFacts, startupFacts} {
		file := a.files[0]
		if facts == startupFacts {
			file = a.files[1]
		}
		for _, n := range [...]string{facts.version, facts.opVersionNames, facts.opVersions, facts.legacy} {
			have, want := as.Get(n), m.Attrs.Get(n)
			if have == nil && want == nil {
				continue
			}
			if !sameAttrValue(have, want) {
				return a.errf("module attr %s: the sidecar has %s, %s has %s", n, showValue(have), orNoFile(file), showValue(want))
			}
		}
	}
	m.Attrs = as
	return nil
}

func orNoFile(file string) string {
	if file == "" {
		return "no startup file (none given)"
	}
	return file
}

// blockRefs32 checks that a block ref value is a 32-bit integer, as the
// text format reads it.
func blockRefs32(at ir.Attr) error {
	switch r := at.Value.(type) {
	case ir.BlockRef:
		if !inInt32(int(r), math.MinInt32) {
			return fmt.Errorf("block %d is out of range (a 32-bit integer)", int(r))
		}
	case ir.BlockRefs:
		return int32s("block refs", "block", r, math.MinInt32)
	}
	return nil
}

// programs applies the entries of main and startup.
func (a *applier) programs(m *ir.Module, doc *sidecarDoc) error {
	if doc.Main != nil {
		if err := a.prog(m.Main, doc.Main, a.files[0]); err != nil {
			return err
		}
	}
	if doc.Startup != nil && m.Startup != nil {
		if err := a.prog(m.Startup, doc.Startup, a.files[1]); err != nil {
			return err
		}
	}
	return nil
}

func (a *applier) prog(p *ir.Program, ps *progSidecar, file string) error {
	pn := p.Name
	if ps.Rank != nil {
		if r := *ps.Rank; r < 0 || r > ir.MaxRank {
			return a.errf("%s: rank %d is not a rank (0 to %d)", pn, r, ir.MaxRank)
		}
		p.Rank = *ps.Rank
	}
	type varKey struct {
		block int
		name  string
	}
	seenVar := map[varKey]bool{}
	for _, ve := range ps.Vars {
		if ve == nil {
			return a.errf("%s: null var entry", pn)
		}
		b := p.Block(ve.Block)
		if b == nil {
			return a.errf("%s: var %q: no block %d", pn, ve.Name, ve.Block)
		}
		k := varKey{ve.Block, ve.Name}
		if seenVar[k] {
			return a.errf("%s: block %d: var %q has two entries", pn, ve.Block, ve.Name)
		}
		seenVar[k] = true
		v := b.Var(ve.Name)
		if v == nil {
			return a.errf("%s: block %d: no var %q", pn, ve.Block, ve.Name)
		}
		where := fmt.Sprintf("%s block %d var %q", pn, ve.Block, ve.Name)
		if d := ve.Dist; d != nil {
			if err := int32s(where, "dims_mapping", d.DimsMapping, math.MinInt32); err != nil {
				return a.errf("%v", err)
			}
			for _, pt := range d.Partial {
				if !inInt32(pt.Dim, 0) {
					return a.errf("%s: partial dim %d is out of range (0 to %d)", where, pt.Dim, math.MaxInt32)
				}
			}
			for _, k := range d.Local {
				if !inInt32(k, 0) {
					return a.errf("%s: local dim %d is out of range (0 to %d)", where, k, math.MaxInt32)
				}
			}
		}
		if ve.Attrs != nil {
			if err := a.varAttrsAgree(where, file, v.Attrs, ve.Attrs); err != nil {
				return err
			}
		}
		v.Flags |= ve.Flags
		if ve.Dist != nil {
			v.Dist = ve.Dist
		}
		if ve.Attrs != nil {
			v.Attrs = ve.Attrs
		}
	}
	type opKey struct{ block, pos int }
	seenOp := map[opKey]bool{}
	for _, oe := range ps.Ops {
		if oe == nil {
			return a.errf("%s: null op entry", pn)
		}
		b := p.Block(oe.Block)
		if b == nil || oe.Pos < 0 || oe.Pos >= len(b.Ops) {
			return a.errf("%s: no op at block %d position %d", pn, oe.Block, oe.Pos)
		}
		k := opKey{oe.Block, oe.Pos}
		if seenOp[k] {
			return a.errf("%s: block %d: the op at position %d has two entries", pn, oe.Block, oe.Pos)
		}
		seenOp[k] = true
		op := b.Ops[oe.Pos]
		where := fmt.Sprintf("%s block %d op %s at position %d", pn, oe.Block, op.Type, oe.Pos)
		if d := oe.Dist; d != nil {
			if !inInt32(d.ImplIndex, math.MinInt32) {
				return a.errf("%s: impl index %d is out of range (a 32-bit integer)", where, d.ImplIndex)
			}
			for _, side := range [2][]ir.ArgDist{d.Inputs, d.Outputs} {
				for _, ad := range side {
					if err := int32s(where+" dist of "+strconv.Quote(ad.Name), "dims_mapping", ad.DimsMapping, math.MinInt32); err != nil {
						return a.errf("%v", err)
					}
				}
			}
		}
		if oe.Attrs != nil {
			if err := a.opAttrsAgree(where, file, op.Attrs, oe.Attrs); err != nil {
				return err
			}
		}
		if oe.ID != nil {
			op.ID = *oe.ID
		}
		op.Fwd = oe.Fwd
		if oe.Dist != nil {
			op.Dist = oe.Dist
		}
		if oe.Attrs != nil {
			op.Attrs = oe.Attrs
		}
	}
	return nil
}

// opAttrsAgree checks a sidecar's exact attrs of an op (side) against those
// the ProgramDesc gave it (file): the same attrs, each value one that the
// proto writes as the file's (a Float that rounds to the file's float32,
// an Int beyond 32 bits that the file has as a LONG), and the same
// is_target. Only paddle.attr_order may differ: a pass may have left it
// stale, which is what the sidecar is there to keep.
func (a *applier) opAttrsAgree(where, file string, fromFile, side ir.Attrs) error {
	if err := a.sameNames(where, file, fromFile, side, func(ir.Attr) bool { return false }); err != nil {
		return err
	}
	for _, s := range side {
		if s.Name == resAttrOrder || strings.HasPrefix(s.Name, reservedPrefix) && s.Name != resIsTarget {
			continue
		}
		want := fromFile.Get(s.Name)
		back := s.Value
		if s.Name != resIsTarget {
			var err error
			if back, err = opAttrBack(s); err != nil {
				return a.errf("%s: attr %s: %v", where, s.Name, err)
			}
		}
		if !sameAttrValue(back, want) {
			return a.errf("%s: attr %s: the sidecar has %s, %s has %s", where, s.Name, showValue(s.Value), file, showValue(want))
		}
	}
	return nil
}

// varAttrsAgree is opAttrsAgree for a var: the sidecar may add attrs that
// a VarDesc cannot hold (they are not written), and has the file's
// others, with its values.
func (a *applier) varAttrsAgree(where, file string, fromFile, side ir.Attrs) error {
	if err := a.sameNames(where, file, fromFile, side, func(s ir.Attr) bool { return !varAttrFits(s.Value) }); err != nil {
		return err
	}
	for _, s := range side {
		if strings.HasPrefix(s.Name, reservedPrefix) || !varAttrFits(s.Value) {
			continue
		}
		if want := fromFile.Get(s.Name); !sameAttrValue(s.Value, want) {
			return a.errf("%s: attr %s: the sidecar has %s, %s has %s", where, s.Name, showValue(s.Value), file, showValue(want))
		}
	}
	return nil
}

// sameNames checks that the sidecar's attrs and the file's have the same
// names, but the reserved ones that may go stale and those the sidecar
// alone may hold (sideOnly).
func (a *applier) sameNames(where, file string, fromFile, side ir.Attrs, sideOnly func(ir.Attr) bool) error {
	kept := func(n string) bool {
		return !strings.HasPrefix(n, reservedPrefix) || n == resIsTarget
	}
	for _, f := range fromFile {
		if kept(f.Name) && side.Get(f.Name) == nil {
			return a.errf("%s: attr %s: the sidecar has none, %s has %s", where, f.Name, file, showValue(f.Value))
		}
	}
	for _, s := range side {
		if kept(s.Name) && fromFile.Get(s.Name) == nil && !sideOnly(s) {
			return a.errf("%s: attr %s: the sidecar has %s, %s has none", where, s.Name, showValue(s.Value), file)
		}
	}
	return nil
}

// opAttrBack returns the value an op attr imports back as once a
// ProgramDesc holds it: the proto's rounding applied.
func opAttrBack(at ir.Attr) (ir.Value, error) {
	e := &encoder{}
	if _, err := e.attr("sidecar", at); err != nil {
		return nil, err
	}
	d := &decoder{name: "sidecar", size: len(e.b)}
	var back ir.Attr
	err := d.each("OpDesc", e.b, 0, func(f *field) error {
		var err error
		back, err = d.opAttr("OpDesc", f)
		return err
	})
	return back.Value, err
}

// sameAttrValue reports whether two attr values (nil: absent) are equal as
// ir.Equal compares them.
func sameAttrValue(x, y ir.Value) bool {
	if x == nil || y == nil {
		return x == nil && y == nil
	}
	return cmp.Equal(ir.Attrs{{Name: "v", Value: x}}, ir.Attrs{{Name: "v", Value: y}}, ir.CmpOptions())
}

// showValue spells an attr value in an error.
func showValue(v ir.Value) string {
	switch x := v.(type) {
	case nil:
		return "none"
	case ir.String:
		return strconv.Quote(string(x))
	case ir.Float:
		return strconv.FormatFloat(float64(x), 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// checkStartup tells a startup program from what is not one (a main
// program given as the startup file, say): a startup program makes its
// persistables from nothing, so it has no feed or fetch op, every op
// reads only vars an earlier op of it wrote or persistables, and the
// persistable tensors it writes are persistables of the main program.
func checkStartup(m *ir.Module) error {
	mainG := m.Main.Global()
	written := map[string]bool{}
	for _, b := range m.Startup.Blocks {
		if b == nil {
			continue
		}
		for pos, op := range b.Ops {
			where := fmt.Sprintf("block %d op %d %s (position %d)", b.Index, op.ID, op.Type, pos)
			switch op.Type {
			case "feed", "fetch", "fetch_v2":
				return fmt.Errorf("%s: a startup program has no %s op (it takes no input and gives no output)", where, op.Type)
			}
			for _, s := range op.Inputs {
				for _, arg := range s.Args {
					if written[arg] {
						continue
					}
					v := m.Startup.LookupVar(b, arg)
					if v == nil || !v.Persistable() {
						return fmt.Errorf("%s: reads %s, which no earlier op of it writes and which is no persistable: a startup program initialises from nothing", where, arg)
					}
				}
			}
			for _, s := range op.Outputs {
				for _, arg := range s.Args {
					written[arg] = true
					v := m.Startup.LookupVar(b, arg)
					if v == nil || !v.Persistable() || !v.Type.IsTensor() {
						continue
					}
					if mv := mainG.Var(arg); mv == nil || !mv.Persistable() {
						return fmt.Errorf("%s: writes the persistable %s, which is no persistable of the main program", where, arg)
					}
				}
			}
		}
	}
	return nil
}
