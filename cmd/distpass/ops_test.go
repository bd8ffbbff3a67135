package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/distpass/distpass/internal/cli"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/sim"
)

// opsDef mirrors the JSON schema of ops's help; the document is an array
// of them.
type opsDef struct {
	Type    string    `json:"type"`
	Doc     string    `json:"doc"`
	Inputs  []opsSlot `json:"inputs"`
	Outputs []opsSlot `json:"outputs"`
	Attrs   []struct {
		Name    string `json:"name"`
		Kind    string `json:"kind"`
		Default any    `json:"default"`
		Allowed []any  `json:"allowed"`
	} `json:"attrs"`
	Traits []string `json:"traits"`
	Shape  string   `json:"shape"`
	Grad   string   `json:"grad"`
	GradOf []string `json:"grad_of"`
	Kernel bool     `json:"kernel"`
	Impls  []struct {
		Ref  string `json:"ref"`
		Name string `json:"name"`
		Doc  string `json:"doc"`
	} `json:"impls"`
	Rule     *string `json:"rule"`
	Sharding *string `json:"sharding"`
}

type opsDoc []opsDef

type opsSlot struct {
	Name     string `json:"name"`
	Optional bool   `json:"optional"`
	Variadic bool   `json:"variadic"`
	NoGrad   bool   `json:"no_grad"`
	Numbered bool   `json:"numbered"`
}

func TestOpsList(t *testing.T) {
	code, out, errOut := distpass("", "ops")
	if code != cli.ExitOK || errOut != "" {
		t.Fatalf("ops: exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if !regexp.MustCompile(`^TYPE +KERNEL +GRAD +IMPLS +SHARDING +SLOTS \{ATTRS\} SHAPE$`).MatchString(lines[0]) {
		t.Errorf("header %q", lines[0])
	}
	// One line per def, in the table's order (by type).
	defs := ops.All()
	if len(lines)-1 != len(defs) {
		t.Fatalf("%d lines for %d defs", len(lines)-1, len(defs))
	}
	for i, d := range defs {
		if f := strings.Fields(lines[i+1]); f[0] != d.Type {
			t.Errorf("line %d is of %s, want %s", i+1, f[0], d.Type)
		}
	}
	want := regexp.MustCompile(`(?m)^matmul_v2 +yes +yes +3 +yes +` +
		regexp.QuoteMeta("X, Y -> Out  {trans_x:bool=false, trans_y:bool=false}  Out = broadcast(X[:-2], Y[:-2]) + [M, N]"))
	if !want.MatchString(out) {
		t.Errorf("no matmul_v2 line like %s in\n%s", want, out)
	}
	grad := regexp.MustCompile(`(?m)^matmul_v2_grad +yes +- +- +yes +` + regexp.QuoteMeta("X, Y, Out@GRAD -> X@GRAD?, Y@GRAD?  {trans_x:bool=false, trans_y:bool=false}  each X@GRAD = X") + `$`)
	if !grad.MatchString(out) {
		t.Errorf("no matmul_v2_grad line like %s", grad)
	}
}

func TestOpsOne(t *testing.T) {
	code, out, errOut := distpass("", "ops", "matmul_v2")
	if code != cli.ExitOK || errOut != "" {
		t.Fatalf("ops matmul_v2: exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"matmul_v2: batched matrix product of X and Y, each optionally transposed\n",
		"inputs:\n  X  required\n  Y  required\noutputs:\n  Out  required\n",
		"attrs:\n  trans_x  bool  default false\n  trans_y  bool  default false\n",
		"traits:   -\n",
		"shape:    Out = broadcast(X[:-2], Y[:-2]) + [M, N] for X [.., M, K], Y [.., K, N]\n",
		"grad:     matmul_v2_grad: X, Y, Out@GRAD -> X@GRAD?, Y@GRAD?\n",
		"kernel:   yes\n",
		"impls:\n  matmul_v2:0  column_parallel     c_identity(X) then the matmul;",
		"\n  matmul_v2:2  replicate_parallel  the matmul as is, matrix dims replicated\n" +
			"rule:     (X: ...mk, Y: ...kn) -> (Out: ...mn) sum strict-backward  [trans_x = false, trans_y = false]\n" +
			"why:      Paddle's MatmulInferSpmd: batch dims right-aligned, a size-1 one replicated; a 1-D operand has k alone; a transpose swaps an operand's last two dims\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("ops matmul_v2 lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "grad of:") {
		t.Errorf("matmul_v2 is nobody's grad:\n%s", out)
	}
	// A grad def names its forward op; a slot flags are spelled out.
	_, out, _ = distpass("", "ops", "matmul_v2_grad")
	for _, want := range []string{"grad of:  matmul_v2\n", "outputs:\n  X@GRAD  optional\n", "grad:     -\n", "impls:    - "} {
		if !strings.Contains(out, want) {
			t.Errorf("ops matmul_v2_grad lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = distpass("", "ops", "reshard")
	for _, want := range []string{"reshard: X, moved from X's dist", "kernel:   yes\n",
		"impls:\n  reshard:0  reshard  this rank's part of X made its part of Out", "rule:     free\nwhy:      constrains no arg"} {
		if !strings.Contains(out, want) {
			t.Errorf("ops reshard lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = distpass("", "ops", "reshape2")
	if !strings.Contains(out, "  ShapeTensor  optional, variadic\n") {
		t.Errorf("ops reshape2 does not spell ShapeTensor's flags:\n%s", out)
	}
	_, out, _ = distpass("", "ops", "gather")
	if !strings.Contains(out, "  Index  required, no grad\n") {
		t.Errorf("ops gather does not spell Index's no-grad:\n%s", out)
	}
}

func TestOpsUnknown(t *testing.T) {
	for _, c := range []struct{ arg, want string }{
		{"matmul_v3", "distpass ops: unknown op type \"matmul_v3\"; nearest: matmul_v2, matmul\n"},
		{"frobnicate_everything", "distpass ops: unknown op type \"frobnicate_everything\" ('distpass ops' lists them)\n"},
	} {
		code, out, errOut := distpass("", "ops", c.arg)
		if code != cli.ExitUsage || out != "" || errOut != c.want {
			t.Errorf("ops %s: exit %d, stdout %q, stderr %q; want exit %d, stderr %q", c.arg, code, out, errOut, cli.ExitUsage, c.want)
		}
	}
	if code, _, errOut := distpass("", "ops", "matmul_v2", "mul"); code != cli.ExitUsage || errOut != "distpass ops: unexpected argument \"mul\"\n" {
		t.Errorf("ops with two types: exit %d, stderr %q", code, errOut)
	}
}

func TestOpsJSON(t *testing.T) {
	code, out, errOut := distpass("", "ops", "-json")
	if code != cli.ExitOK || errOut != "" {
		t.Fatalf("ops -json: exit %d, stderr %q", code, errOut)
	}
	var doc opsDoc
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("ops -json does not parse as its schema: %v", err)
	}
	defs := ops.All()
	if len(doc) != len(defs) {
		t.Fatalf("%d defs in the JSON, %d in the table", len(doc), len(defs))
	}
	kernels := sim.DefaultKernels()
	impls := map[string]int{}
	for _, c := range lower.DefaultRegistry().Containers() {
		impls[c.Type] = len(c.Impls)
	}
	for i, d := range defs {
		o := doc[i]
		if o.Type != d.Type || o.Shape != d.Shape || o.Grad != d.GradType() || o.Kernel != (kernels[d.Type] != nil) ||
			len(o.Impls) != impls[d.Type] || len(o.Inputs) != len(d.Inputs) || len(o.Outputs) != len(d.Outputs) ||
			len(o.Attrs) != len(d.Attrs) || o.Sharding == nil || *o.Sharding != d.ShardingDoc ||
			o.Rule == nil || (*o.Rule != "") != (d.Rule() != nil) {
			t.Errorf("JSON def %d %s does not say what the table does: %+v", i, o.Type, o)
		}
	}
	at := slices.IndexFunc(doc, func(o opsDef) bool {
		return o.Type == "matmul_v2"
	})
	if at < 0 {
		t.Fatal("no matmul_v2 in the JSON")
	}
	checkMatmulV2JSON(t, doc[at:at+1])

	// ops TYPE -json: an array of that one def, the same object.
	code, out, errOut = distpass("", "ops", "matmul_v2", "-json")
	if code != cli.ExitOK || errOut != "" {
		t.Fatalf("ops matmul_v2 -json: exit %d, stderr %q", code, errOut)
	}
	var one opsDoc
	if err := json.Unmarshal([]byte(out), &one); err != nil || len(one) != 1 {
		t.Fatalf("ops matmul_v2 -json: %v, %d defs", err, len(one))
	}
	checkMatmulV2JSON(t, one)
	_, out, _ = distpass("", "ops", "matmul_v2_grad", "-json")
	if err := json.Unmarshal([]byte(out), &one); err != nil || len(one) != 1 || !slices.Equal(one[0].GradOf, []string{"matmul_v2"}) || one[0].Grad != "" {
		t.Errorf("ops matmul_v2_grad -json: %v, %+v", err, one)
	}
}

func checkMatmulV2JSON(t *testing.T, doc opsDoc) {
	t.Helper()
	o := doc[0]
	slot := func(n string) opsSlot { return opsSlot{Name: n} }
	var refs, names []string
	for _, im := range o.Impls {
		refs, names = append(refs, im.Ref), append(names, im.Name)
	}
	if o.Type != "matmul_v2" || !slices.Equal(o.Inputs, []opsSlot{slot("X"), slot("Y")}) || !slices.Equal(o.Outputs, []opsSlot{slot("Out")}) ||
		o.Grad != "matmul_v2_grad" || len(o.GradOf) != 0 || o.GradOf == nil || !o.Kernel ||
		!slices.Equal(refs, []string{"matmul_v2:0", "matmul_v2:1", "matmul_v2:2"}) ||
		!slices.Equal(names, []string{"column_parallel", "row_parallel", "replicate_parallel"}) ||
		len(o.Traits) != 0 || o.Traits == nil || !strings.HasPrefix(o.Shape, "Out = broadcast(X[:-2], Y[:-2])") {
		t.Errorf("matmul_v2's JSON: %+v", o)
	}
	if len(o.Attrs) != 2 || o.Attrs[0].Name != "trans_x" || o.Attrs[0].Kind != "bool" || o.Attrs[0].Default != false ||
		o.Attrs[0].Allowed == nil || len(o.Attrs[0].Allowed) != 0 {
		t.Errorf("matmul_v2's attrs in JSON: %+v", o.Attrs)
	}
}
