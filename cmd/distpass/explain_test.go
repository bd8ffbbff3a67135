package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/internal/cli"
)

const mlpExample = "../../examples/mlp_dp_mp.dpir"

// distpass runs the command in process and returns its exit code and
// output.
func distpass(stdin string, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := cli.Main(args, &cli.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut})
	return code, out.String(), errOut.String()
}

// explainDoc mirrors the JSON schema of explain's help.
type explainDoc struct {
	File     string `json:"file"`
	Measured bool   `json:"measured"`
	Ranks    []struct {
		Rank        int `json:"rank"`
		Collectives []struct {
			Program       string  `json:"program"`
			Block         int     `json:"block"`
			Op            int64   `json:"op"`
			Type          string  `json:"type"`
			RingID        int64   `json:"ring_id"`
			Group         []int   `json:"group"`
			Axis          string  `json:"axis"`
			Payload       string  `json:"payload"`
			DType         string  `json:"dtype"`
			Shape         []int64 `json:"shape"`
			Bytes         *int64  `json:"bytes"`
			DataDependent bool    `json:"data_dependent"`
			MeasuredBytes *int64  `json:"measured_bytes"`
			Origin        string  `json:"origin"`
			Impl          string  `json:"impl"`
		} `json:"collectives"`
		Totals         []explainTotals `json:"totals"`
		MeasuredTotals []explainTotals `json:"measured_totals"`
		Memory         *struct {
			Params, Persistables, Activations struct {
				Vars    int   `json:"vars"`
				Bytes   int64 `json:"bytes"`
				Unknown int   `json:"unknown"`
			}
			TotalBytes int64 `json:"total_bytes"`
			PeakBytes  int64 `json:"peak_activation_bytes"`
			PeakOp     int64 `json:"peak_op"`
		} `json:"memory"`
	} `json:"ranks"`
}

type explainTotals struct {
	Program       string `json:"program"`
	Per           string `json:"per"`
	Ops           int    `json:"ops"`
	Bytes         int64  `json:"bytes"`
	DataDependent int    `json:"data_dependent"`
	ByAxis        []struct {
		Name          string `json:"name"`
		Ops           int    `json:"ops"`
		Bytes         int64  `json:"bytes"`
		DataDependent int    `json:"data_dependent"`
	} `json:"by_axis"`
	ByType []struct {
		Name          string `json:"name"`
		Ops           int    `json:"ops"`
		Bytes         int64  `json:"bytes"`
		DataDependent int    `json:"data_dependent"`
	} `json:"by_type"`
}

func parseExplain(t *testing.T, out string) explainDoc {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var doc explainDoc
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if dec.More() {
		t.Fatal("more than one JSON document")
	}
	return doc
}

func TestExplainJSON(t *testing.T) {
	code, out, errOut := distpass("", "explain", "-json", "-all", "-memory", mlpExample)
	if code != cli.ExitOK || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	doc := parseExplain(t, out)
	if doc.File != mlpExample || doc.Measured || len(doc.Ranks) != 4 {
		t.Fatalf("file %q, measured %v, %d ranks", doc.File, doc.Measured, len(doc.Ranks))
	}
	for i, r := range doc.Ranks {
		if r.Rank != i {
			t.Errorf("ranks[%d] is rank %d", i, r.Rank)
		}
		if len(r.Collectives) != 6 {
			t.Fatalf("rank %d: %d collectives", r.Rank, len(r.Collectives))
		}
		c := r.Collectives[1] // op 14, the row-parallel allreduce
		if c.Program != "main" || c.Op != 14 || c.Type != "c_allreduce_sum" || c.Axis != "mp" ||
			c.Payload != "c_allreduce_sum.tmp_0" || c.DType != "f32" || !slices.Equal(c.Shape, []int64{4, 16}) ||
			c.Bytes == nil || *c.Bytes != 256 || c.DataDependent || c.MeasuredBytes != nil ||
			c.Origin != "matmul_v2:1 row-parallel: partial Out summed over mp" || c.Impl != "matmul_v2:1" {
			t.Errorf("rank %d op 14: %+v", r.Rank, c)
		}
		wantMP := map[int][]int{0: {0, 1}, 1: {0, 1}, 2: {2, 3}, 3: {2, 3}}[r.Rank]
		if !slices.Equal(c.Group, wantMP) || c.RingID != map[int]int64{0: 3, 1: 3, 2: 4, 3: 4}[r.Rank] {
			t.Errorf("rank %d op 14: group %v ring %d", r.Rank, c.Group, c.RingID)
		}
		if s := r.Collectives[4]; s.Program != "startup" || s.Type != "c_broadcast" || *s.Bytes != 512 {
			t.Errorf("rank %d: collectives[4] = %+v", r.Rank, s)
		}
		if len(r.Totals) != 2 || r.Totals[0].Program != "main" || r.Totals[0].Per != "step" ||
			r.Totals[1].Program != "startup" || r.Totals[1].Per != "once" {
			t.Fatalf("rank %d totals %+v", r.Rank, r.Totals)
		}
		main := r.Totals[0]
		if main.Ops != 4 || main.Bytes != 2304 || len(main.ByAxis) != 2 ||
			main.ByAxis[0].Name != "dp" || main.ByAxis[0].Bytes != 2048 ||
			main.ByAxis[1].Name != "mp" || main.ByAxis[1].Bytes != 256 {
			t.Errorf("rank %d main totals %+v", r.Rank, main)
		}
		if r.Totals[1].Bytes != 1024 || r.MeasuredTotals != nil {
			t.Errorf("rank %d startup totals %+v, measured %+v", r.Rank, r.Totals[1], r.MeasuredTotals)
		}
		if m := r.Memory; m == nil || m.Params.Bytes != 2048 || m.Persistables.Bytes != 4 ||
			m.Activations.Bytes != 4360 || m.Activations.Vars != 13 || m.TotalBytes != 6412 ||
			m.PeakBytes != 2560 || m.PeakOp != 9 {
			t.Errorf("rank %d memory %+v", r.Rank, m)
		}
	}
	// Deterministic: the same bytes again.
	if _, again, _ := distpass("", "explain", "-json", "-all", "-memory", mlpExample); again != out {
		t.Error("a second run printed another document")
	}
}

// TestExplainJSONMeasuredMoE: the MoE layer's exchanges have no static
// figure (bytes null) and a measured one; the measured totals count them.
func TestExplainJSONMeasuredMoE(t *testing.T) {
	code, moe, errOut := distpass("", "example", "moe", "-batch", "4", "-experts", "4", "-topk", "2")
	if code != cli.ExitOK {
		t.Fatal(errOut)
	}
	code, out, errOut := distpass(moe, "explain", "-json", "-measure", "-rank", "1", "-")
	if code != cli.ExitOK || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	doc := parseExplain(t, out)
	if doc.File != "<stdin>" || !doc.Measured || len(doc.Ranks) != 1 || doc.Ranks[0].Rank != 1 {
		t.Fatalf("file %q measured %v ranks %d", doc.File, doc.Measured, len(doc.Ranks))
	}
	r := doc.Ranks[0]
	exchanges := 0
	for _, c := range r.Collectives {
		if c.MeasuredBytes == nil {
			t.Errorf("op %d %s: not measured", c.Op, c.Type)
			continue
		}
		switch c.Type {
		case "global_scatter", "global_gather":
			exchanges++
			if c.Bytes != nil || !c.DataDependent || *c.MeasuredBytes != 48 || !slices.Equal(c.Shape, []int64{-1, 4}) {
				t.Errorf("op %d %s: bytes %v, data-dependent %v, measured %d", c.Op, c.Type, c.Bytes, c.DataDependent, *c.MeasuredBytes)
			}
		default:
			if c.Bytes == nil || *c.Bytes != *c.MeasuredBytes {
				t.Errorf("op %d %s: static %v, measured %d", c.Op, c.Type, c.Bytes, *c.MeasuredBytes)
			}
		}
	}
	if exchanges != 4 {
		t.Errorf("%d exchanges, want 4", exchanges)
	}
	// Static: 16 (alltoall) + 2 × 64 (grad allreduces), 4 data-dependent;
	// measured: the same plus 4 × 48.
	if m := r.Totals[0]; m.Bytes != 144 || m.DataDependent != 4 {
		t.Errorf("static main totals %+v", m)
	}
	if m := r.MeasuredTotals[0]; m.Bytes != 144+4*48 || m.DataDependent != 0 {
		t.Errorf("measured main totals %+v", m)
	}
}

// TestExplainExitCodes: bad input exits 1, usage errors 2, help 0.
func TestExplainExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		stdin  string
		code   int
		stderr string // a line of it
	}{
		{args: []string{"-rank", "4", mlpExample}, code: cli.ExitFail,
			stderr: mlpExample + ": rank 4 is in no mesh of the module (mesh world has ranks [0, 1, 2, 3])"},
		{args: []string{"-rank", "100", mlpExample}, code: cli.ExitFail,
			stderr: mlpExample + ": rank 100 is in no mesh of the module (mesh world has ranks [0, 1, 2, 3])"},
		{args: []string{"-"}, stdin: "program main {", code: cli.ExitFail, stderr: "<stdin>:1:15: "},
		{args: []string{"-"}, stdin: "program main { block 0 { } }", code: cli.ExitFail,
			stderr: "<stdin>: the module has no mesh, so no ranks"},
		{args: []string{"-all", "-rank", "0", mlpExample}, code: cli.ExitUsage, stderr: "distpass explain: give at most one of -rank R and -all"},
		{args: []string{"-rank", "-2", mlpExample}, code: cli.ExitUsage, stderr: `invalid value "-2" for flag -rank: want 0 or more`},
		{args: []string{"-rank", "one", mlpExample}, code: cli.ExitUsage, stderr: `invalid value "one" for flag -rank: want an integer`},
		{args: []string{mlpExample, mlpExample}, code: cli.ExitUsage, stderr: "distpass explain: one FILE at most"},
		{args: []string{"-nosuch"}, code: cli.ExitUsage, stderr: "flag provided but not defined: -nosuch"},
		{args: []string{"-h"}, code: cli.ExitOK},
		// -sharding VAR: completion's provenance, not collectives.
		{args: []string{"-sharding", "l0_fc1_b", "-rank", "0", gptBare}, code: cli.ExitUsage,
			stderr: "distpass explain: -sharding VAR explains completion, not collectives: it takes no -rank"},
		{args: []string{"-sharding", "l0_fc1_b", "-measure", gptBare}, code: cli.ExitUsage,
			stderr: "distpass explain: -sharding VAR explains completion, not collectives: it takes no -measure"},
		{args: []string{"-sharding", "", gptBare}, code: cli.ExitUsage, stderr: "distpass explain: -sharding wants a var name"},
		{args: []string{"-sharding", "x", gptBare, gptBare}, code: cli.ExitUsage, stderr: "distpass explain: one FILE at most"},
		{args: []string{"-sharding", "l0_fc1_bb", gptBare}, code: cli.ExitFail,
			stderr: gptBare + `: -sharding: no dense-tensor var "l0_fc1_bb" in the main program; nearest: l0_fc1_b, `},
		{args: []string{"-sharding", "y", "-"}, stdin: "program main {\n  block 0 {\n    var y : f32[2]\n  }\n}\n", code: cli.ExitFail,
			stderr: "<stdin>: complete: the module declares no mesh"},
		{args: []string{"-sharding", "l0_fc1_b", gptBare}, code: cli.ExitOK},
	} {
		code, out, errOut := distpass(tc.stdin, append([]string{"explain"}, tc.args...)...)
		if tc.code == cli.ExitOK && len(tc.args) > 1 {
			if code != cli.ExitOK || !strings.HasPrefix(out, "param l0_fc1_b : ") || errOut != "" {
				t.Errorf("explain %v: exit %d, stdout %q, stderr %q", tc.args, code, out, errOut)
			}
			continue
		}
		if code != tc.code {
			t.Errorf("explain %v: exit %d, want %d (stderr %q)", tc.args, code, tc.code, errOut)
		}
		if tc.stderr != "" && !slices.ContainsFunc(strings.Split(errOut, "\n"), func(l string) bool { return strings.HasPrefix(l, tc.stderr) }) {
			t.Errorf("explain %v: stderr %q, want a line starting %q", tc.args, errOut, tc.stderr)
		}
		if tc.code == cli.ExitOK && (!strings.HasPrefix(out, "usage: distpass explain ") || errOut != "") {
			t.Errorf("explain -h: stdout %q, stderr %q", out, errOut)
		}
	}
}
