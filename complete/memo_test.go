package complete

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/distpass/distpass/interop/paddle"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// TestRuleMemo: every op of the examples and of the Paddle programs gets
// from the memo a rule equal to the one it would build itself, and the
// memo does share rules (the layers repeat).
func TestRuleMemo(t *testing.T) {
	var mods []*ir.Module
	for _, glob := range []string{"../examples/*.dpir", "../interop/paddle/testdata/*.pdmodel"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var m *ir.Module
			if strings.HasSuffix(f, ".dpir") {
				m, err = ir.Parse(f, data)
			} else {
				m, err = paddle.Import(f, data)
			}
			if err != nil {
				t.Fatal(err)
			}
			mods = append(mods, m)
		}
	}
	// Ops alike but for an attr, or for which args name one var.
	twins, err := ir.Parse("twins.dpir", []byte(`module twins
program main {
  block 0 {
    var x : f32[4, 4]
    var y : f32[4, 4]
    var a : f32[4, 4]
    var b : f32[4, 4]
    var c : f32[4, 4]
    var d : f32[4, 4]
    op 1 softmax(X: x) -> (Out: a) {axis = 0}
    op 2 softmax(X: x) -> (Out: b) {axis = 1}
    op 3 elementwise_mul(X: x, Y: y) -> (Out: c) {axis = -1}
    op 4 elementwise_mul(X: x, Y: x) -> (Out: d) {axis = -1}
  }
}
`))
	if err != nil {
		t.Fatal(err)
	}
	mods = append(mods, twins)
	if len(mods) < 8 {
		t.Fatalf("%d modules", len(mods))
	}
	shared := 0
	for _, m := range mods {
		e := &engine{m: m, g: buildGraph(m)}
		for i := range e.g.ops {
			n := &e.g.ops[i]
			n.fixed = false // annotated ops need no rule; here every op gets one
			e.buildRule(n)
			fresh, err := ops.ShardingRuleOf(n.op, e.g.lookup(n))
			if err != nil {
				continue // not memoized
			}
			if !reflect.DeepEqual(n.rule, fresh) {
				t.Errorf("%s: %s: the memo's rule %#v, its own %#v", m.Name, n.op, n.rule, fresh)
			}
		}
		shared += len(e.g.ops) - e.memo.Len()
	}
	if shared == 0 {
		t.Error("no op shared a rule")
	}
}
