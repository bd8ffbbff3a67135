package complete_test

import (
	"bytes"
	"encoding/json"
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
	type input struct {
		name  string
		build func() (*ir.Module, error)
	}
	ins := []input{{"synthetic gpt", func() (*ir.Module, error) { return models.SyntheticGPTMesh(3000, 7, 2, 2) }}}
	for _, c := range zoo() {
		ins = append(ins, input{c.name, c.build})
	}
	for _, in := range ins {
		src, err := in.build()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range src.Programs() {
			n += p.NumOps()
		}
		if in.name == "synthetic gpt" && n < 3000 {
			t.Fatalf("the synthetic GPT has %d ops, want a few thousand", n)
		}
		strip(src, nil)
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
