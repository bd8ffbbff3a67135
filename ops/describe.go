package ops

import (
	"strings"

	"github.com/distpass/distpass/ir"
)

// One-line spellings of a def's parts, for `distpass ops` and README's
// op list.

// String spells the slot as its name, with ? when it is optional and ...
// when it is variadic ("X", "Bias?", "X...", "ShapeTensor?...").
func (s Slot) String() string {
	n := s.Name
	if s.Numbered {
		n += "0, " + s.Name + "1, ..."
	}
	if s.Optional {
		n += "?"
	}
	if s.Variadic {
		n += "..."
	}
	return n
}

// String spells the attr as name:kind=default ("trans_x:bool=false"), or
// name:kind when it has no default.
func (a Attr) String() string {
	s := a.Name + ":" + a.Type.String()
	if a.Default != nil {
		s += "=" + ValueString(a.Default)
	}
	return s
}

// Signature spells d's slots as "X, Y -> Out".
func (d *Def) Signature() string {
	return slotList(d.Inputs) + " -> " + slotList(d.Outputs)
}

func slotList(ss []Slot) string {
	if len(ss) == 0 {
		return "()"
	}
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = s.String()
	}
	return strings.Join(parts, ", ")
}

// GradOf returns the types of the defs whose grad op is of type t, sorted:
// the forward type of a derived grad def, and of an op type that is some
// op's grad by Emit (global_gather is global_scatter's).
func GradOf(t string) []string {
	var out []string
	for _, d := range All() {
		if d.Grad != nil && d.GradType() == t {
			out = append(out, d.Type)
		}
	}
	return out
}

// ValueString spells an attr value as .dpir text does: 5, 0.5, true,
// "NCHW", [1, 2], long(5).
func ValueString(v ir.Value) string {
	if v == nil {
		return "none"
	}
	// The printer is the one spelling of values: print a one-attr op and
	// cut the value out.
	s := ir.PrintOp(&ir.Op{Type: "x", Attrs: ir.Attrs{{Name: "v", Value: v}}})
	i, j := strings.Index(s, "{v = "), strings.LastIndex(s, "} role ")
	if i < 0 || j < i {
		return v.Kind().String()
	}
	return s[i+len("{v = ") : j]
}
