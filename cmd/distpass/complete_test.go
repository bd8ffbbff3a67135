package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/internal/cli"
	"github.com/distpass/distpass/ir"
)

const gptBare = "../../examples/gpt_bare.dpir"

// completeDoc mirrors the JSON schema of complete's help.
type completeDoc struct {
	File    string `json:"file"`
	Summary string `json:"summary"`
	Vars    struct {
		Completed int `json:"completed"`
		Annotated int `json:"annotated"`
	} `json:"vars"`
	Ops struct {
		Completed int `json:"completed"`
		Kept      int `json:"kept"`
	} `json:"ops"`
	Sweeps int `json:"sweeps"`
	Visits int `json:"visits"`
	Impls  []struct {
		Impl  string `json:"impl"`
		Count int    `json:"count"`
	} `json:"impls"`
	Conflicts []struct {
		Op       int64  `json:"op"`
		OpType   string `json:"op_type"`
		Var      string `json:"var"`
		Dim      int    `json:"dim"`
		Kept     int    `json:"kept"`
		KeptFrom string `json:"kept_from"`
		Lost     int    `json:"lost"`
		LostFrom string `json:"lost_from"`
	} `json:"conflicts"`
	Uneven []struct {
		Op      int64  `json:"op"`
		OpType  string `json:"op_type"`
		Var     string `json:"var"`
		Dim     int    `json:"dim"`
		Size    int64  `json:"size"`
		MeshDim int    `json:"mesh_dim"`
		Ways    int    `json:"ways"`
	} `json:"uneven"`
	Barriers      []completeBarrier `json:"barriers"`
	RuleConflicts []completeBarrier `json:"rule_conflicts"`
	RuleErrors    []completeBarrier `json:"rule_errors"`
	Fallbacks     []completeBarrier `json:"fallbacks"`
	Reshards      []struct {
		Op      int64  `json:"op"`
		OpType  string `json:"op_type"`
		Var     string `json:"var"`
		Output  bool   `json:"output"`
		Mesh    string `json:"mesh"`
		Have    []int  `json:"have"`
		Partial []struct {
			Dim    int `json:"Dim"`
			Reduce int `json:"Reduce"`
		} `json:"have_partial"`
		Want []int `json:"want"`
	} `json:"reshards"`
	Origins []varOrigins `json:"origins"`
}

type completeBarrier struct {
	Op     int64  `json:"op"`
	OpType string `json:"op_type"`
	Why    string `json:"why"`
}

type varOrigins struct {
	Var  string `json:"var"`
	Dims []struct {
		Dim        int    `json:"dim"`
		MeshDim    int    `json:"mesh_dim"`
		Annotation string `json:"annotation"`
		Hops       []struct {
			Op      int64  `json:"op"`
			OpType  string `json:"op_type"`
			From    string `json:"from"`
			FromDim int    `json:"from_dim"`
			To      string `json:"to"`
			ToDim   int    `json:"to_dim"`
		} `json:"hops"`
	} `json:"dims"`
}

// decodeStrict decodes the one JSON document of out into v, refusing
// fields v does not name.
func decodeStrict(t *testing.T, out string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if dec.More() {
		t.Fatal("more than one JSON document")
	}
}

// TestCompleteJSON parses complete -report -json of the GPT with only
// data and weight matrices annotated: its counts agree with the text
// report, and every origin is a chain of hops from its annotation to its
// var's dim.
func TestCompleteJSON(t *testing.T) {
	code, out, errOut := distpass("", "complete", "-report", "-json", gptBare)
	if code != cli.ExitOK || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc completeDoc
	decodeStrict(t, out, &doc)
	_, text, _ := distpass("", "complete", "-report", gptBare)
	if first, _, _ := strings.Cut(text, "\n"); doc.Summary != first {
		t.Errorf("summary %q, the text report's first line %q", doc.Summary, first)
	}
	if doc.File != gptBare || doc.Vars.Annotated != 17 || doc.Vars.Completed != 237 ||
		doc.Ops.Completed != 178 || doc.Ops.Kept != 0 || doc.Sweeps < 1 || doc.Visits < doc.Ops.Completed/2 {
		t.Errorf("file %q vars %+v ops %+v sweeps %d visits %d", doc.File, doc.Vars, doc.Ops, doc.Sweeps, doc.Visits)
	}
	n := 0
	for i, c := range doc.Impls {
		n += c.Count
		if i > 0 && doc.Impls[i-1].Impl >= c.Impl {
			t.Errorf("impls not sorted: %q before %q", doc.Impls[i-1].Impl, c.Impl)
		}
	}
	// impls counts the ops that picked one; a grad op with a forward op
	// (fwd N) takes that op's instead.
	_, done, _ := distpass("", "complete", gptBare)
	m, err := ir.Parse("completed", []byte(done))
	if err != nil {
		t.Fatal(err)
	}
	picked := 0
	for _, b := range m.Main.Blocks {
		for _, op := range b.Ops {
			if op.Dist == nil {
				t.Errorf("op %d %s has no dist", op.ID, op.Type)
			}
			if op.Fwd == 0 {
				picked++
			}
		}
	}
	if n != picked || doc.Ops.Completed != len(m.Main.Blocks[0].Ops) {
		t.Errorf("impls count %d ops, %d picked one; ops.completed %d of %d ops", n, picked, doc.Ops.Completed, len(m.Main.Blocks[0].Ops))
	}
	// Every op type of the GPT has a rule: no barrier.
	if len(doc.Barriers) != 0 {
		t.Errorf("barriers %+v", doc.Barriers)
	}
	// Empty lists are [], not null.
	for name, l := range map[string]bool{"conflicts": doc.Conflicts == nil, "uneven": doc.Uneven == nil,
		"barriers": doc.Barriers == nil, "rule_conflicts": doc.RuleConflicts == nil, "rule_errors": doc.RuleErrors == nil, "fallbacks": doc.Fallbacks == nil, "reshards": doc.Reshards == nil} {
		if l {
			t.Errorf("%s is null", name)
		}
	}

	byVar := map[string]varOrigins{}
	for _, vo := range doc.Origins {
		byVar[vo.Var] = vo
		split := false
		for d, o := range vo.Dims {
			if o.Dim != d {
				t.Errorf("%s: dims[%d] is dim %d", vo.Var, d, o.Dim)
			}
			if o.MeshDim < 0 {
				if o.Annotation != "" || o.Hops != nil {
					t.Errorf("%s dim %d: replicated, with an origin %+v", vo.Var, d, o)
				}
				continue
			}
			split = true
			name, ok := strings.CutPrefix(o.Annotation, "var ")
			if !ok {
				t.Errorf("%s dim %d: annotation %q, want a var (no op is annotated)", vo.Var, d, o.Annotation)
				continue
			}
			// The hops chain from the annotated var to this dim.
			at, atDim := name, -1
			for k, h := range o.Hops {
				if h.From != at || (atDim >= 0 && h.FromDim != atDim) {
					t.Errorf("%s dim %d: hop %d %+v starts at %s dim %d, not where the hop before ended", vo.Var, d, k, h, at, atDim)
				}
				at, atDim = h.To, h.ToDim
			}
			if len(o.Hops) == 0 && name != vo.Var || len(o.Hops) > 0 && (at != vo.Var || atDim != d) {
				t.Errorf("%s dim %d: from %s, the hops end at %s dim %d", vo.Var, d, o.Annotation, at, atDim)
			}
		}
		if !split {
			t.Errorf("%s is in origins with no split dim", vo.Var)
		}
	}
	b, ok := byVar["l0_fc1_b"]
	if !ok || len(b.Dims) != 1 || b.Dims[0].MeshDim != 1 || b.Dims[0].Annotation != "var l0_fc1_w" || len(b.Dims[0].Hops) != 2 ||
		b.Dims[0].Hops[0].Op != 44 || b.Dims[0].Hops[0].OpType != "matmul_v2" || b.Dims[0].Hops[1].OpType != "elementwise_add" {
		t.Errorf("l0_fc1_b's origin: %+v", b)
	}
	if _, ok := byVar["wte"]; ok {
		t.Error("wte (not annotated, replicated) is in origins")
	}
	// explain -sharding -json prints the same entry.
	for _, name := range []string{"l0_fc1_b", "l0_fc1_mm", "l0_fc1_w@GRAD", "lnf_out"} {
		code, one, errOut := distpass("", "explain", "-sharding", name, "-json", gptBare)
		if code != cli.ExitOK || errOut != "" {
			t.Fatalf("explain -sharding %s: exit %d: %s", name, code, errOut)
		}
		var got varOrigins
		decodeStrict(t, one, &got)
		want, ok := byVar[name]
		if !ok || !jsonEqual(t, got, want) {
			t.Errorf("explain -sharding %s -json:\n%s\nwant the origins entry %+v", name, one, want)
		}
	}
	// Deterministic: the same bytes again.
	if _, again, _ := distpass("", "complete", "-report", "-json", gptBare); again != out {
		t.Error("a second run printed another document")
	}
}

func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Equal(x, y)
}
