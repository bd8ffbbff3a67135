package ops

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/distpass/distpass/ir"
)

// family is one file's definitions, under the file's name.
type family struct {
	name string
	defs []*Def
}

// families lists every family's definitions: the one place a def is
// registered. Grad defs derived from the forward defs' Grad follow.
func families() []family {
	return []family{
		{"matmul", matmulDefs()},
		{"elementwise", elementwiseDefs()},
		{"activation", activationDefs()},
		{"reduce", reduceDefs()},
		{"nn", nnDefs()},
		{"conv", convDefs()},
		{"data", dataDefs()},
		{"broadcast", broadcastDefs()},
		{"moe", moeDefs()},
		{"optimizer", optimizerDefs()},
		{"collective", collectiveDefs()},
		{"reshard", reshardDefs()},
		{"control", controlDefs()},
		{"quant", quantDefs()},
		{"interp", interpDefs()},
	}
}

// Families returns the families' names in the table's order.
func Families() []string {
	var names []string
	for _, f := range families() {
		names = append(names, f.name)
	}
	return names
}

type table struct {
	byType map[string]*Def
	newer  map[string][]*Def // by the newer dialect's spelling (Def.Newer)
	all    []*Def            // sorted by type
	err    error             // a broken table: a test reports it
}

var (
	builtin = sync.OnceValue(build)
	// added is the table with the defs Add added; nil before the first.
	added atomic.Pointer[table]
	addMu sync.Mutex // serialises Add
)

// theTable is the table as it stands: the built-in defs and those added.
func theTable() *table {
	if t := added.Load(); t != nil {
		return t
	}
	return builtin()
}

// Add adds op types to the table, for the life of the process: each def,
// and the grad def derived from its Grad (when Grad is data, not Emit).
// A def without a Family gets "custom". Add checks the defs as the
// table checks its own and adds none of them on an error: a type already
// defined, a slot or attr listed twice, a default of the wrong kind, a
// grad that names a slot the def lacks. Lookups running meanwhile see the
// table before or after, never a part of it.
func Add(defs ...*Def) error {
	addMu.Lock()
	defer addMu.Unlock()
	old := theTable()
	t := &table{byType: maps.Clone(old.byType), newer: maps.Clone(old.newer), all: slices.Clone(old.all), err: old.err}
	var fresh []*Def
	put := func(d *Def) error {
		if d.Type == "" {
			return errors.New("ops: a def has no type")
		}
		if t.byType[d.Type] != nil {
			return fmt.Errorf("ops: %s is already defined", d.Type)
		}
		t.byType[d.Type] = d
		t.index(d)
		t.all = append(t.all, d)
		fresh = append(fresh, d)
		return nil
	}
	for _, d := range defs {
		if d.Family == "" {
			d.Family = "custom"
		}
		slices.SortFunc(d.Attrs, func(a, b Attr) int { return strings.Compare(a.Name, b.Name) })
		if err := put(d); err != nil {
			return err
		}
	}
	for _, d := range defs {
		if g := d.Grad; g != nil && g.Emit == nil {
			if err := put(gradDef(d)); err != nil {
				return err
			}
		}
	}
	for _, d := range fresh {
		if msg := d.problem(t); msg != "" {
			return fmt.Errorf("ops: %s: %s", d.Type, msg)
		}
	}
	slices.SortFunc(t.all, func(a, b *Def) int { return strings.Compare(a.Type, b.Type) })
	added.Store(t)
	return nil
}

func build() *table {
	t := &table{byType: map[string]*Def{}, newer: map[string][]*Def{}}
	var errs []string
	add := func(d *Def) {
		if d.Type == "" {
			errs = append(errs, "a def has no type")
			return
		}
		if t.byType[d.Type] != nil {
			errs = append(errs, d.Type+" is defined twice")
			return
		}
		t.byType[d.Type] = d
		t.index(d)
		t.all = append(t.all, d)
	}
	for _, fam := range families() {
		for _, d := range fam.defs {
			d.Family = fam.name
			slices.SortFunc(d.Attrs, func(a, b Attr) int { return strings.Compare(a.Name, b.Name) })
			add(d)
		}
	}
	// Derived grad defs come after every forward def, so that a grad op
	// defined by hand (an Emit's cast, c_embedding_grad) wins only by
	// being listed: a derived def of a type already defined is an error.
	for _, d := range slices.Clone(t.all) {
		if g := d.Grad; g != nil && g.Emit == nil {
			add(gradDef(d))
		}
	}
	for _, d := range t.all {
		if msg := d.problem(t); msg != "" {
			errs = append(errs, d.Type+": "+msg)
		}
	}
	slices.SortFunc(t.all, func(a, b *Def) int { return strings.Compare(a.Type, b.Type) })
	if errs != nil {
		t.err = fmt.Errorf("ops: %s", strings.Join(errs, "; "))
	}
	return t
}

// problem returns what is wrong with d as a def, or "".
func (d *Def) problem(t *table) string {
	seen := map[string]bool{}
	for _, ss := range [2][]Slot{d.Inputs, d.Outputs} {
		for _, s := range ss {
			if s.Name == "" || seen[s.Name] {
				return fmt.Sprintf("slot %q empty or listed twice", s.Name)
			}
			seen[s.Name] = true
		}
	}
	for i, a := range d.Attrs {
		if a.Name == "" || i > 0 && d.Attrs[i-1].Name == a.Name {
			return fmt.Sprintf("attr %q empty or listed twice", a.Name)
		}
		if a.Default != nil && !kindAccepts(a.Type, a.Default.Kind()) {
			return fmt.Sprintf("attr %s: default of kind %s, not %s", a.Name, a.Default.Kind(), a.Type)
		}
	}
	if d.Infer != nil && d.Shape == "" {
		return "an inference without a one-line shape rule"
	}
	if (d.Sharding != nil) != (d.ShardingDoc != "") {
		return "a sharding rule goes with its one-line ShardingDoc"
	}
	if d.Sharding != nil && d.NoRule != "" {
		return "a sharding rule, and NoRule says why it has none"
	}
	if g := d.Grad; g != nil {
		for _, s := range g.Diff {
			if !d.hasInput(s) {
				return "grad: Diff slot " + s + " is not an input"
			}
		}
		if (g.Infer != nil) != (g.Shape != "") {
			return "grad: an Infer goes with its one-line Shape"
		}
		if g.Emit != nil && t.byType[g.Type] == nil && g.Type != "" {
			return "grad: emits undefined type " + g.Type
		}
	}
	return ""
}

func (d *Def) hasInput(name string) bool {
	for _, s := range d.Inputs {
		if s.Name == name {
			return true
		}
	}
	return false
}

// GradType returns the type of d's grad op, "" when d has no gradient.
func (d *Def) GradType() string {
	switch {
	case d.Grad == nil:
		return ""
	case d.Grad.Type != "":
		return d.Grad.Type
	}
	return d.Type + "_grad"
}

// Lookup returns the def of op type t, or nil.
func Lookup(t string) *Def { return theTable().byType[t] }

// index files d under its newer spelling, if it has one (a copy of the
// list: tables share them).
func (t *table) index(d *Def) {
	if d.Newer != nil {
		t.newer[d.Newer.Type] = append(slices.Clone(t.newer[d.Newer.Type]), d)
	}
}

// IsCollective reports whether ops of type t communicate between ranks
// (the Collective trait). A collective must run on every rank of its
// group, so no pass may drop one on some ranks only.
func IsCollective(t string) bool { return Has(t, Collective) }

// Has reports whether op type t's def has any of traits tr (false for a
// type the table does not define).
func Has(t string, tr Traits) bool {
	d := Lookup(t)
	return d != nil && d.Traits&tr != 0
}

// ReadsOwnPart reports whether an op of type t reads a rank's own part of
// a partial input as what it is (the OwnPart trait), not as the whole
// value; a grad type answers by its forward type (global_scatter_grad by
// global_scatter's). spmd.NeedsReshard takes the answer as its own.
func ReadsOwnPart(t string) bool {
	return Has(strings.TrimSuffix(t, "_grad"), OwnPart)
}

// HasSideEffects reports whether ops of type t matter beyond the values
// they write: collectives, I/O with the caller, checks and control flow
// (and a type the table does not define: nothing says it is pure).
// Dead-code elimination keeps them.
func HasSideEffects(t string) bool {
	d := Lookup(t)
	return d == nil || d.Traits&(Collective|SideEffects|ControlFlow) != 0
}

// The one reading of an op's attrs, by the kind the table declares: the
// impls and the kernels read through these, so that a value means what
// verify accepted it as (Paddle's loader reads a bool from an int, an
// int from a long), and an absent attr is the table's default.

// AttrValue returns op's attr name as given, or else the table's
// default for op's type: nil when neither is there. ir.AsInt, AsInts,
// AsBool and AsFloat read it at either width.
func AttrValue(op *ir.Op, name string) ir.Value {
	if v := op.Attrs.Get(name); v != nil {
		return v
	}
	return AttrDefault(op.Type, name)
}

// AttrBool returns op's bool attr name: a bool, or an int or a long
// (non-zero is true, as Paddle's loader reads is_test = 1); absent, the
// table's default (false when it declares none); an error for a value of
// another kind.
func AttrBool(op *ir.Op, name string) (bool, error) {
	v := AttrValue(op, name)
	x, ok := ir.AsBool(v)
	if !ok && v != nil {
		return false, fmt.Errorf("attr %s has kind %s, want bool", name, v.Kind())
	}
	return x, nil
}

// AttrOn reports whether op's bool attr name is true, as AttrBool reads
// it (false for a value of another kind, which verify refuses).
func AttrOn(op *ir.Op, name string) bool {
	b, _ := AttrBool(op, name)
	return b
}

// AttrInt returns op's int attr name: an int or a long; absent, the
// table's default (0 when it declares none); an error for a value of
// another kind.
func AttrInt(op *ir.Op, name string) (int64, error) {
	v := AttrValue(op, name)
	x, ok := ir.AsInt(v)
	if !ok && v != nil {
		return 0, fmt.Errorf("attr %s has kind %s, want int", name, v.Kind())
	}
	return x, nil
}

// AttrFloat returns op's float attr name: a float or a float64; absent,
// the table's default (0 when it declares none); an error for a value of
// another kind.
func AttrFloat(op *ir.Op, name string) (float64, error) {
	v := AttrValue(op, name)
	x, ok := ir.AsFloat(v)
	if !ok && v != nil {
		return 0, fmt.Errorf("attr %s has kind %s, want float", name, v.Kind())
	}
	return x, nil
}

// AttrDefault returns the table's default of attr name of op type t, or
// nil: the type or the attr is not in the table, or it has no default.
func AttrDefault(t, name string) ir.Value {
	if d := Lookup(t); d != nil {
		for i := range d.Attrs {
			if d.Attrs[i].Name == name {
				return d.Attrs[i].Default
			}
		}
	}
	return nil
}

// All returns every def, forward and grad, sorted by type. The slice is
// shared: callers must not change it.
func All() []*Def { return theTable().all }

// Check returns an error describing every broken def of the table (two
// defs of one type, a duplicate slot, a default of the wrong kind), or
// nil. A test keeps it nil.
func Check() error { return theTable().err }
