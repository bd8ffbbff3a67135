package golden

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/distpass/distpass/internal/corpus"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/passes"
)

// TestDeterminism runs every golden case, as the harness does (the
// pipeline per rank, then its DOT), and partitions every case's input
// for all of its ranks at once with PartitionAll and PartitionClasses,
// the concurrent paths, plus an 8-rank GPT, bigger than any GOMAXPROCS
// below so that ranks queue for the workers. It does so twenty times at
// GOMAXPROCS 2 and three times each at 1 and 8, and every round must
// give the bytes of the first: programs, drawings and error texts. The
// first round must also give the cases' expected outputs, and the
// concurrent paths must agree with the pipeline of a case that only
// partitions (and verifies).
func TestDeterminism(t *testing.T) {
	cases := corpus.Golden(t)
	gpt := models.TinyGPT()
	gpt.Layers = 2
	big, err := models.GPTTraining(gpt, "dp,mp", models.Mesh([]int{2, 4}, []string{"dp", "mp"}), "adam")
	if err != nil {
		t.Fatal(err)
	}
	bigCase := corpus.Case{Name: "gpt-2x4", Module: big}

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first *outputs
	for _, s := range []struct{ procs, rounds int }{{2, 20}, {1, 3}, {8, 3}} {
		runtime.GOMAXPROCS(s.procs)
		for round := range s.rounds {
			got := runRound(t, append(cases, bigCase))
			if first == nil {
				first = got
				checkFirstRound(t, cases, got)
				continue
			}
			if k, a, b, ok := first.differ(got); ok {
				t.Fatalf("GOMAXPROCS %d, round %d: %s differs from the first round's:\n%s",
					s.procs, round+1, k, diff.Diff("first", a, "now", b))
			}
		}
	}
}

// outputs holds a round's bytes by what made them.
type outputs struct {
	keys []string
	text map[string][]byte
}

func (o *outputs) put(key string, b []byte) {
	o.keys = append(o.keys, key)
	o.text[key] = b
}

func (o *outputs) putErr(key string, err error) {
	o.put(key+" error", []byte(fmt.Sprint(err)))
}

// differ returns the first key whose bytes differ between o and p.
func (o *outputs) differ(p *outputs) (string, []byte, []byte, bool) {
	if !slices.Equal(o.keys, p.keys) {
		return "the list of outputs", []byte(strings.Join(o.keys, "\n")), []byte(strings.Join(p.keys, "\n")), true
	}
	for _, k := range o.keys {
		if !bytes.Equal(o.text[k], p.text[k]) {
			return k, o.text[k], p.text[k], true
		}
	}
	return "", nil, nil, false
}

func runRound(t *testing.T, cases []corpus.Case) *outputs {
	t.Helper()
	ctx := context.Background()
	out := &outputs{text: map[string][]byte{}}
	for _, c := range cases {
		for _, r := range c.Ranks {
			key := fmt.Sprintf("%s rank %d: %s", c.Name, r, c.PipelineFor(r))
			text, dot, err := runOnce(c.Module, c.PipelineFor(r))
			out.put(key, text)
			out.put(key+" dot", dot)
			out.putErr(key, err)
		}
		mods, err := passes.PartitionAll(ctx, c.Module, nil)
		out.putErr(c.Name+" partition-all", err)
		for _, m := range mods {
			out.put(fmt.Sprintf("%s partition-all rank %d", c.Name, m.Main.Rank), ir.Print(m))
		}
		cs, err := passes.PartitionClasses(ctx, c.Module, nil, nil)
		out.putErr(c.Name+" classes", err)
		if err != nil {
			continue
		}
		for _, r := range cs.Ranks() {
			m, err := cs.Module(r)
			if err != nil {
				t.Fatal(err)
			}
			out.put(fmt.Sprintf("%s classes rank %d", c.Name, r), ir.Print(m))
		}
	}
	return out
}

// checkFirstRound holds the first round to the cases' expectations, and
// the concurrent paths to the pipeline where the pipeline only
// partitions.
func checkFirstRound(t *testing.T, cases []corpus.Case, o *outputs) {
	t.Helper()
	n := 0
	for _, c := range cases {
		plain := c.Pipeline == "partition{rank=$RANK}" || c.Pipeline == "partition{rank=$RANK},verify"
		for _, r := range c.Ranks {
			key := fmt.Sprintf("%s rank %d: %s", c.Name, r, c.PipelineFor(r))
			got := o.text[key]
			if e := string(o.text[key+" error"]); e != "<nil>" {
				got = []byte(e + "\n")
			}
			if !bytes.Equal(got, c.Want[r]) {
				t.Errorf("%s: not the expected output:\n%s", key, diff.Diff("want", c.Want[r], "got", got))
			}
			if !plain || c.WantErr {
				continue
			}
			for _, path := range []string{"partition-all", "classes"} {
				n++
				if p := o.text[fmt.Sprintf("%s %s rank %d", c.Name, path, r)]; !bytes.Equal(p, o.text[key]) {
					t.Errorf("%s rank %d: %s differs from the pipeline:\n%s", c.Name, r, path, diff.Diff("pipeline", o.text[key], path, p))
				}
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d rank programs compared across the paths", n)
	}
}
