package ops

import (
	"slices"

	"github.com/distpass/distpass/ir"
)

// reshardDefs: the explicit reshard, the op insert-reshards places where a
// var's dist differs from the one an op needs. It is a family of its own,
// not a collective: serially it is the identity and it names no group;
// what it moves is stated by its vars' dists (X's the source, Out's the
// destination), and only its lowering per rank makes collectives of it.
// ReshardType is the op type of reshards, and the impl type that lowers
// them.
const ReshardType = "reshard"

func reshardDefs() []*Def {
	return []*Def{{
		Type: ReshardType, Doc: "X, moved from X's dist (mesh, dims_mapping, partial) to Out's; serially the identity",
		Inputs: in("X"), Outputs: in("Out"),
		// origin says which op needed what; it is for explain alone.
		Attrs: []Attr{stringAttr("origin", "")},
		Shape: "Out = X", Infer: sameAs("X", "Out"),
		// Completion runs before reshards are inserted; one written by
		// hand keeps each side's own dist, which is what it converts.
		Sharding: freeRule, ShardingDoc: "constrains no arg: X's and Out's dists are the two ends it converts between",
		Check: checkReshard,
	}}
}

// checkReshard checks what a reshard needs beyond its types: both vars
// have dists (what it converts), and its op dist, when it has one, is on
// Out's mesh and lists each arg with its var's mapping, so that no reader
// of the op sees two different answers. The dists themselves are checked
// on their meshes by ir.Verify, at the vars.
func checkReshard(c *Infer, report func(varName, msg string)) {
	x := argAt(c.op.Inputs, c.ins, "X", 0)
	out := argAt(c.op.Outputs, c.outs, "Out", 0)
	for _, a := range [2]struct {
		slot string
		v    *ir.Var
	}{{"X", x}, {"Out", out}} {
		if a.v == nil || !a.v.Type.IsTensor() {
			continue
		}
		if a.v.Dist == nil {
			report(a.v.Name(), a.slot+" "+a.v.Name()+" has no dist: a reshard converts X's dist into Out's")
		}
	}
	od := c.op.Dist
	if od == nil {
		return
	}
	if out != nil && out.Dist != nil && od.Mesh != out.Dist.Mesh {
		report(out.Name(), "dist mesh "+od.Mesh+" is not Out "+out.Name()+"'s mesh "+out.Dist.Mesh)
	}
	check := func(side string, ads []ir.ArgDist, slot string, v *ir.Var) {
		if v == nil || v.Dist == nil {
			return
		}
		for _, ad := range ads {
			if ad.Name == v.Name() && !slices.Equal(ad.DimsMapping, v.Dist.DimsMapping) {
				report(v.Name(), "dist "+side+" "+slot+" "+v.Name()+": dims_mapping "+ir.FormatInts(ad.DimsMapping)+
					" is not its var's "+ir.FormatInts(v.Dist.DimsMapping))
			}
		}
	}
	check("input", od.Inputs, "X", x)
	check("output", od.Outputs, "Out", out)
}
