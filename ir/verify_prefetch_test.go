package ir

import (
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// prefetchModule is verifyBase grown past what the batched lookups of
// Verify treat specially: a main block of several runs of prefetchOps ops
// with a nil op, args that no block declares, a duplicate var, and an
// indexed sub-block (8 vars or more) whose ops read its parent's vars.
func prefetchModule(t *testing.T) *Module {
	t.Helper()
	m := verifyBase()
	b0, body := m.Main.Blocks[0], m.Main.Blocks[1]
	nextID := int64(100)
	op := func(b *Block, in, out string) *Op {
		nextID++
		o := &Op{ID: nextID, Type: "scale", Inputs: Slots("X", in), Outputs: Slots("Out", out), Attrs: Attrs{A("scale", Float(2))}}
		b.Ops = append(b.Ops, o)
		return o
	}
	prev := "x"
	for i := range 3*prefetchOps + 5 {
		name := fmt.Sprintf("p%d", i)
		if err := b0.AddVar(&Var{name: name, Kind: KindVar, Type: Tensor(F32, 8, 16)}); err != nil {
			t.Fatal(err)
		}
		in := prev
		switch i {
		case 70, 150:
			in = fmt.Sprintf("nowhere%d", i) // undeclared
		case 71:
			b0.Ops = append(b0.Ops, nil)
		}
		op(b0, in, name)
		prev = name
	}
	addDupVar(b0, "p3")
	for i := range 9 {
		name := fmt.Sprintf("q%d", i)
		if err := body.AddVar(&Var{name: name, Kind: KindVar, Type: Tensor(F32, 8, 16)}); err != nil {
			t.Fatal(err)
		}
		op(body, "x", name)            // the parent's
		op(body, name, "nowhere_body") // undeclared output
	}
	return m
}

// Verify's batched lookups answer as its one-at-a-time lookups do, on a
// module where every kind of answer occurs.
func TestVerifyPrefetchSameAsLookup(t *testing.T) {
	m := prefetchModule(t)
	violations := func(prefetch bool) []Violation {
		t.Helper()
		defer func(old int) { batchSlots = old }(batchSlots)
		batchSlots = 1 << 62 // never
		if prefetch {
			batchSlots = 0 // always
		}
		var ve *VerifyError
		if err := Verify(m); !errors.As(err, &ve) {
			t.Fatalf("prefetch %v: Verify = %v, want a *VerifyError", prefetch, err)
		}
		return ve.Violations
	}
	batched, single := violations(true), violations(false)
	if d := cmp.Diff(single, batched); d != "" {
		t.Fatalf("violations with prefetch differ from without (-without +with):\n%s", d)
	}
	text := (&VerifyError{Violations: batched}).Error()
	for _, want := range []string{
		"op 171 scale: input X names undeclared var nowhere70",
		"op 251 scale: input X names undeclared var nowhere150",
		"op at position", // the nil op
		"var p3",         // the duplicate
		"main block 1: op 299 scale: output Out names undeclared var nowhere_body",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("violations lack %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "undeclared var x") || strings.Contains(text, "undeclared var q") {
		t.Errorf("a declared var (the parent's x, the sub-block's q*) reported undeclared:\n%s", text)
	}
}

// findBatch answers as find does for names in the table, names not in it,
// and names whose first probe lands on another name's slot.
func TestNameTableFindBatch(t *testing.T) {
	var vars []*Var
	for i := range 5000 {
		vars = append(vars, &Var{name: fmt.Sprintf("v%d", i)})
	}
	vars = append(vars, nil, &Var{name: "v17"}, &Var{name: "v4999"}) // a nil and two duplicates
	// Built by runs and one by one: the same slots, the same duplicates.
	defer func(old int) { batchSlots = old }(batchSlots)
	var tab, single nameTable
	batchSlots = 1 << 62
	singleDups := single.build(vars, nil)
	batchSlots = 0
	dups := tab.build(vars, nil)
	if !slices.Equal(dups, []int32{5001, 5002}) || !slices.Equal(singleDups, dups) {
		t.Fatalf("duplicates by runs %v, one by one %v, want [5001 5002]", dups, singleDups)
	}
	if !slices.Equal(tab.slots, single.slots) || tab.n != single.n {
		t.Fatal("a table built by runs differs from one built one var at a time")
	}
	var names []string
	for i := range 12000 {
		names = append(names, fmt.Sprintf("v%d", i)) // 5000 present, 7000 absent
	}
	out := make([]int32, len(names))
	tab.findBatch(vars, names, make([]uint64, len(names)), out)
	probed := 0
	for k, name := range names {
		if want := tab.find(vars, name); out[k] != want {
			t.Fatalf("findBatch(%s) = %d, find = %d", name, out[k], want)
		}
		if h := tab.slots[maphash.String(nameSeed, name)&uint64(len(tab.slots)-1)]; out[k] >= 0 && h&(1<<tab.posBits-1) != uint32(out[k]+1) {
			probed++
		}
	}
	if probed == 0 {
		t.Fatal("no name needed a second probe: the test does not reach findBatch's fallback")
	}
	var empty nameTable
	empty.findBatch(vars, names[:3], make([]uint64, 3), out[:3])
	if out[0] != -1 || out[1] != -1 || out[2] != -1 {
		t.Fatalf("findBatch on an empty table = %v, want -1s", out[:3])
	}
}
