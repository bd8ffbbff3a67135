package complete_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
)

// completion is what one completion gives: the module's text, the text
// report and the JSON one (complete -report -json's document).
type completion struct {
	module, text, json []byte
}

func completeOnce(t *testing.T, m *ir.Module) completion {
	t.Helper()
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var txt bytes.Buffer
	if err := rep.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	doc := struct {
		Summary string `json:"summary"`
		*complete.Report
		Origins []complete.VarOrigins `json:"origins"`
	}{rep.Summary(), rep, rep.Origins()}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return completion{ir.Print(m), txt.Bytes(), js}
}

// TestDeterministic: a module completed twice, and completed after a
// round trip through the text format, gives the same module bytes, the
// same text report and the same JSON report: on the synthetic GPT of a
// few thousand ops (dp,mp on 2×2, only data and params annotated) and
// on every zoo case.
func TestDeterministic(t *testing.T) {
	ins := []zooCase{{name: "synthetic gpt", build: func() (*ir.Module, error) { return models.SyntheticGPTMesh(3000, 7, 2, 2) }}}
	ins = append(ins, zoo()...)
	for _, in := range ins {
		src := zooInput(t, in)
		n := 0
		for _, p := range src.Programs() {
			n += p.NumOps()
		}
		if in.name == "synthetic gpt" && n < 3000 {
			t.Fatalf("the synthetic GPT has %d ops, want a few thousand", n)
		}
		text := ir.Print(src)
		first := completeOnce(t, src.Clone())
		again := completeOnce(t, src.Clone())
		parsed, err := ir.Parse(in.name, text)
		if err != nil {
			t.Fatal(err)
		}
		trip := completeOnce(t, parsed)
		for _, c := range []struct {
			how string
			got completion
		}{{"completed again", again}, {"completed after a text round trip", trip}} {
			if !bytes.Equal(first.module, c.got.module) {
				t.Errorf("%s: %s: the module's bytes differ", in.name, c.how)
			}
			if !bytes.Equal(first.text, c.got.text) {
				t.Errorf("%s: %s: the text report differs:\n%s\nthen\n%s", in.name, c.how, first.text, c.got.text)
			}
			if !bytes.Equal(first.json, c.got.json) {
				t.Errorf("%s: %s: the JSON report differs", in.name, c.how)
			}
		}
		if bytes.Equal(first.module, text) {
			t.Errorf("%s: completion changed nothing", in.name)
		}
	}
}

// reverseVarLines reverses, in each block of a printed module, the order
// of its var declarations (lines "    var", "    param", "    persist").
func reverseVarLines(text []byte) []byte {
	lines := bytes.SplitAfter(text, []byte("\n"))
	isVar := func(l []byte) bool {
		for _, p := range []string{"    var ", "    param ", "    persist "} {
			if bytes.HasPrefix(l, []byte(p)) {
				return true
			}
		}
		return false
	}
	for i := 0; i < len(lines); {
		if !isVar(lines[i]) {
			i++
			continue
		}
		j := i
		for j < len(lines) && isVar(lines[j]) {
			j++
		}
		slices.Reverse(lines[i:j])
		i = j
	}
	return bytes.Join(lines, nil)
}

// TestVarOrderIndependent: the order vars are declared in decides
// nothing (the engine goes in program order): with every block's var
// declarations reversed, each var and op gets the same dist, and the
// report the same counts and lists.
func TestVarOrderIndependent(t *testing.T) {
	ins := []zooCase{{name: "synthetic gpt", build: func() (*ir.Module, error) { return models.SyntheticGPTMesh(3000, 7, 2, 2) }}}
	ins = append(ins, zoo()...)
	for _, in := range ins {
		src := zooInput(t, in)
		text := ir.Print(src)
		rev := reverseVarLines(text)
		if bytes.Equal(rev, text) {
			t.Fatalf("%s: reversing the var declarations changed nothing", in.name)
		}
		a, err := ir.Parse(in.name, text)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ir.Parse(in.name+" reversed", rev)
		if err != nil {
			t.Fatal(err)
		}
		ra, err := complete.Complete(a, complete.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rb, err := complete.Complete(b, complete.Options{})
		if err != nil {
			t.Fatal(err)
		}
		da, db := dists(a), dists(b)
		n := 0
		for k, x := range da {
			if db[k] != x {
				if n++; n <= 5 {
					t.Errorf("%s: %s: %s, with the vars reversed %s", in.name, k, x, db[k])
				}
			}
		}
		if len(da) != len(db) {
			t.Errorf("%s: %d dists, %d with the vars reversed", in.name, len(da), len(db))
		}
		if sa, sb := ra.Summary(), rb.Summary(); sa != sb {
			t.Errorf("%s: summary %q, with the vars reversed %q", in.name, sa, sb)
		}
		if !slices.Equal(ra.Conflicts, rb.Conflicts) || !slices.Equal(ra.Uneven, rb.Uneven) {
			t.Errorf("%s: conflicts or uneven differ with the vars reversed", in.name)
		}
		if !slices.EqualFunc(ra.Reshards, rb.Reshards, func(x, y complete.Reshard) bool {
			return x.Op == y.Op && x.Var == y.Var && slices.Equal(x.Have, y.Have) && slices.Equal(x.Want, y.Want)
		}) {
			t.Errorf("%s: reshards differ with the vars reversed", in.name)
		}
	}
}

// zooInput is c's module as TestZoo completes it: stripped to its data
// and params, with the dists of the ops of c.keepOps.
func zooInput(t *testing.T, c zooCase) *ir.Module {
	t.Helper()
	want, err := c.build()
	if err != nil {
		t.Fatal(err)
	}
	m := want.Clone()
	strip(m, nil)
	for bi, b := range want.Main.Blocks {
		for i, op := range b.Ops {
			if slices.Contains(c.keepOps, op.Type) {
				m.Main.Blocks[bi].Ops[i].Dist = op.Dist.Clone()
			}
		}
	}
	return m
}
