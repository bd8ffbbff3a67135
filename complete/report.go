package complete

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
)

// Report is what a completion decided and could not decide.
type Report struct {
	Vars struct {
		Completed int `json:"completed"` // dense vars given a dist
		Annotated int `json:"annotated"` // dense vars that had one
	} `json:"vars"`
	Ops struct {
		Completed int `json:"completed"` // ops given a dist
		Kept      int `json:"kept"`      // ops whose dist the user wrote
	} `json:"ops"`
	// Sweeps and Visits measure the fixpoint.
	Sweeps int `json:"sweeps"`
	Visits int `json:"visits"`
	// Impls counts the impls picked, by "type:index".
	Impls []ImplCount `json:"impls"`
	// Conflicts lists the mesh dims that lost, one per (var, dim, mesh
	// dim), in the order met.
	Conflicts []Conflict `json:"conflicts"`
	// Uneven lists the mesh dims not propagated to a dim they do not
	// divide.
	Uneven []Uneven `json:"uneven"`
	// Barriers lists the ops without a sharding rule: their args are
	// replicated.
	Barriers []Barrier `json:"barriers"`
	// RuleConflicts lists the ops whose rule refused their inputs' dists
	// together: the first inputs keep theirs, the later ones are
	// resharded to what the rule then requires (a Reshard each).
	RuleConflicts []Barrier `json:"rule_conflicts"`
	// RuleErrors lists the ops whose rule refused even that; they read
	// their inputs replicated.
	RuleErrors []Barrier `json:"rule_errors"`
	// Fallbacks lists the ops no impl lowers as their rule gives them:
	// they read and write every arg replicated.
	Fallbacks []Barrier `json:"fallbacks"`
	// Reshards lists the op args whose var's dist is not what the op
	// requires: where the module needs a reshard.
	Reshards []Reshard `json:"reshards"`

	e          *engine
	conflictAt map[conflictKey]bool
	implCount  map[string]int
}

// ImplCount is how many ops got an impl.
type ImplCount struct {
	Impl  string `json:"impl"`
	Count int    `json:"count"`
}

// Conflict is a mesh dim proposed to a var's dim that lost: the dim was
// split along Kept already, or (Kept -1) the var uses the mesh dim on
// another dim. Each side names the annotation it came from.
type Conflict struct {
	Op       int64  `json:"op"`
	OpType   string `json:"op_type"`
	Var      string `json:"var"`
	Dim      int    `json:"dim"`
	Kept     int    `json:"kept"`
	KeptFrom string `json:"kept_from"`
	Lost     int    `json:"lost"`
	LostFrom string `json:"lost_from"`
}

// Uneven is a mesh dim of Ways ranks that does not divide dim Dim of
// Var (of size Size), proposed by op Op: the dim stays replicated.
type Uneven struct {
	Op      int64  `json:"op"`
	OpType  string `json:"op_type"`
	Var     string `json:"var"`
	Dim     int    `json:"dim"`
	Size    int64  `json:"size"`
	MeshDim int    `json:"mesh_dim"`
	Ways    int    `json:"ways"`
}

// Barrier is an op completion could not run a rule for, and why.
type Barrier struct {
	Op     int64  `json:"op"`
	OpType string `json:"op_type"`
	Why    string `json:"why"`
}

// Reshard is an op arg whose var's dist is not what the op requires of
// it (Output: what the op gives it).
type Reshard struct {
	Op      int64        `json:"op"`
	OpType  string       `json:"op_type"`
	Var     string       `json:"var"`
	Output  bool         `json:"output,omitempty"`
	Mesh    string       `json:"mesh"`
	Have    []int        `json:"have"`
	Partial []ir.Partial `json:"have_partial,omitempty"`
	// WantMesh is the op's mesh: another than Mesh when the data must
	// move between meshes (pipeline stages).
	WantMesh string `json:"want_mesh"`
	Want     []int  `json:"want"`
	// WantPartial is, for an output, the partial state the op gives it.
	WantPartial []ir.Partial `json:"want_partial,omitempty"`
}

type conflictKey struct {
	v, d, k int32
}

// first reports whether key is met for the first time: a fixpoint
// proposes the same loser on every visit, listed once.
func (r *Report) first(key conflictKey) bool {
	if r.conflictAt[key] {
		return false
	}
	if r.conflictAt == nil {
		r.conflictAt = map[conflictKey]bool{}
	}
	r.conflictAt[key] = true
	return true
}

func (r *Report) conflict(e *engine, i, v int32, d, kept, lost int) {
	if !r.first(conflictKey{v, int32(d), int32(lost)}) {
		return
	}
	n := &e.g.ops[i]
	c := Conflict{Op: n.op.ID, OpType: n.op.Type, Var: e.g.vars[v].Name(), Dim: d, Kept: kept, Lost: lost}
	if kept >= 0 {
		c.KeptFrom = e.annotation(v, d)
	} else if o := slices.Index(e.s.dims[v], lost); o >= 0 {
		c.KeptFrom = e.annotation(v, o)
	}
	c.LostFrom = e.annotationOf(e.source(i, v, lost))
	r.Conflicts = append(r.Conflicts, c)
}

func (e *engine) conflict(i, v int32, d, kept, lost int) { e.rep.conflict(e, i, v, d, kept, lost) }

func (e *engine) uneven(i, v int32, d, k int) {
	r := e.rep
	if !r.first(conflictKey{v, int32(d), int32(k) | 1<<16}) {
		return
	}
	n := &e.g.ops[i]
	r.Uneven = append(r.Uneven, Uneven{Op: n.op.ID, OpType: n.op.Type, Var: e.g.vars[v].Name(), Dim: d,
		Size: e.g.vars[v].Type.Shape[d], MeshDim: k, Ways: e.s.mesh[v].Shape[k]})
}

func (e *engine) barrier(n *opNode) {
	why := "no sharding rule"
	if n.ruleErr != nil {
		why = n.ruleErr.Error()
	}
	e.rep.Barriers = append(e.rep.Barriers, Barrier{Op: n.op.ID, OpType: n.op.Type, Why: why})
}

// ruleConflict lists the inputs of op n that lost to earlier ones: what
// they are and what the rule then requires.
func (r *Report) ruleConflict(n *opNode, err error, had, want [][]int) {
	e := r.e
	var parts []string
	for k, v := range n.ins() {
		if v < 0 || k >= len(want) || k >= len(had) || had[k] == nil || slices.Equal(had[k], want[k]) {
			continue
		}
		part := fmt.Sprintf("%s %s wanted as %s", e.argName(n, k), ir.FormatInts(had[k]), ir.FormatInts(want[k]))
		// Where each side's mesh dim came from, on the first dim they differ.
		for d, x := range had[k] {
			if d >= len(want[k]) || x == want[k][d] {
				continue
			}
			if x >= 0 {
				part += fmt.Sprintf(" (its mesh dim %d on dim %d from %s", x, d, e.annotation(v, d))
			} else {
				part += fmt.Sprintf(" (dim %d replicated", d)
			}
			if y := want[k][d]; y >= 0 {
				for _, a := range n.ins()[:k] {
					if i := slices.Index(e.s.dims[max(a, 0)], y); a >= 0 && i >= 0 {
						part += fmt.Sprintf("; mesh dim %d kept from %s", y, e.annotation(a, i))
						break
					}
				}
			}
			part += ")"
			break
		}
		parts = append(parts, part)
	}
	r.RuleConflicts = append(r.RuleConflicts, Barrier{Op: n.op.ID, OpType: n.op.Type,
		Why: err.Error() + ": the first inputs keep their dists; " + strings.Join(parts, ", ")})
}

func (r *Report) ruleError(n *opNode, err error) {
	r.RuleErrors = append(r.RuleErrors, Barrier{Op: n.op.ID, OpType: n.op.Type, Why: err.Error()})
}

func (r *Report) impl(n *opNode, c implRef) { r.implName(fmt.Sprintf("%s:%d", c.typ, c.idx)) }

func (r *Report) implName(s string) {
	if r.implCount == nil {
		r.implCount = map[string]int{}
	}
	r.implCount[s]++
	r.Ops.Completed++
}

func (r *Report) reshard(n *opNode, name string, out bool, have *ir.TensorDist, want []int) {
	r.Reshards = append(r.Reshards, Reshard{Op: n.op.ID, OpType: n.op.Type, Var: name, Output: out, Mesh: have.Mesh,
		Have: slices.Clone(have.DimsMapping), Partial: slices.Clone(have.Partial), WantMesh: n.mesh.Name, Want: slices.Clone(want)})
}

// reshardPartial lists output name of op n, which the op gives as want
// partial p, where its var's dist says another partial state.
func (r *Report) reshardPartial(n *opNode, name string, have *ir.TensorDist, want []int, p []ir.Partial) {
	r.Reshards = append(r.Reshards, Reshard{Op: n.op.ID, OpType: n.op.Type, Var: name, Output: true, Mesh: have.Mesh,
		Have: slices.Clone(have.DimsMapping), Partial: slices.Clone(have.Partial), WantMesh: n.mesh.Name,
		Want: slices.Clone(want), WantPartial: slices.Clone(p)})
}

func (r *Report) finish() {
	e := r.e
	// Empty lists, not nil: the JSON has [] for none.
	for _, l := range []*[]Barrier{&r.Barriers, &r.RuleConflicts, &r.RuleErrors, &r.Fallbacks} {
		if *l == nil {
			*l = []Barrier{}
		}
	}
	if r.Conflicts == nil {
		r.Conflicts = []Conflict{}
	}
	if r.Uneven == nil {
		r.Uneven = []Uneven{}
	}
	if r.Reshards == nil {
		r.Reshards = []Reshard{}
	}
	r.Impls = []ImplCount{}
	for v := range e.g.vars {
		if !e.g.dense[v] {
			continue
		}
		if e.s.closed[v] {
			r.Vars.Annotated++
		} else {
			r.Vars.Completed++
		}
	}
	for k, c := range r.implCount {
		r.Impls = append(r.Impls, ImplCount{k, c})
	}
	slices.SortFunc(r.Impls, func(a, b ImplCount) int { return cmp.Compare(a.Impl, b.Impl) })
}

// Summary is the report in one line: "complete: 120 vars completed
// (8 annotated), 95 ops, 3 sweeps; 0 conflicts, 0 uneven, 1 barrier
// (fetch), 2 reshards needed".
func (r *Report) Summary() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d vars completed (%d annotated), %d ops (%d kept), %d sweeps (%d op visits); %d conflicts, %d uneven, %d barriers",
		r.Vars.Completed, r.Vars.Annotated, r.Ops.Completed, r.Ops.Kept, r.Sweeps, r.Visits, len(r.Conflicts), len(r.Uneven), len(r.Barriers))
	if len(r.Barriers) > 0 {
		var types []string
		for _, b := range r.Barriers {
			if !slices.Contains(types, b.OpType) {
				types = append(types, b.OpType)
			}
		}
		fmt.Fprintf(&sb, " (%s)", strings.Join(types, ", "))
	}
	fmt.Fprintf(&sb, ", %d rule conflicts, %d rule errors, %d fallbacks, %d reshards needed", len(r.RuleConflicts), len(r.RuleErrors), len(r.Fallbacks), len(r.Reshards))
	return sb.String()
}

// VarOrigins is where each dim of a var got its sharding.
type VarOrigins struct {
	Var  string      `json:"var"`
	Dims []DimOrigin `json:"dims"`
}

// Origins lists, for every dense var with a split dim, in block order,
// where each dim's sharding came from.
func (r *Report) Origins() []VarOrigins {
	e := r.e
	var out []VarOrigins
	for v, x := range e.g.vars {
		if !e.g.dense[v] || !slices.ContainsFunc(e.s.dims[v], func(k int) bool { return k >= 0 }) {
			continue
		}
		vo := VarOrigins{Var: x.Name(), Dims: make([]DimOrigin, len(e.s.dims[v]))}
		for d, k := range e.s.dims[v] {
			vo.Dims[d] = DimOrigin{Dim: d, MeshDim: k}
			if k >= 0 {
				vo.Dims[d].Annotation, vo.Dims[d].Hops = e.chain(int32(v), d)
			}
		}
		out = append(out, vo)
	}
	return out
}

// WriteText writes the summary and every conflict, uneven split,
// barrier, rule error and needed reshard, a line each.
func (r *Report) WriteText(w io.Writer) error {
	var sb strings.Builder
	sb.WriteString(r.Summary() + "\n")
	if len(r.Impls) > 0 {
		sb.WriteString("impls:")
		for _, c := range r.Impls {
			fmt.Fprintf(&sb, " %s %d", c.Impl, c.Count)
		}
		sb.WriteString("\n")
	}
	for _, c := range r.Conflicts {
		if c.Kept >= 0 {
			fmt.Fprintf(&sb, "conflict: op %d %s: %s dim %d stays split along mesh dim %d (from %s); mesh dim %d (from %s) lost\n",
				c.Op, c.OpType, c.Var, c.Dim, c.Kept, c.KeptFrom, c.Lost, c.LostFrom)
		} else {
			fmt.Fprintf(&sb, "conflict: op %d %s: %s dim %d stays replicated: mesh dim %d (from %s) splits another dim of it (from %s)\n",
				c.Op, c.OpType, c.Var, c.Dim, c.Lost, c.LostFrom, c.KeptFrom)
		}
	}
	for _, u := range r.Uneven {
		fmt.Fprintf(&sb, "uneven: op %d %s: %s dim %d (size %d) stays replicated: mesh dim %d has %d ranks\n",
			u.Op, u.OpType, u.Var, u.Dim, u.Size, u.MeshDim, u.Ways)
	}
	for _, b := range r.Barriers {
		fmt.Fprintf(&sb, "barrier: op %d %s: %s: its args replicated\n", b.Op, b.OpType, b.Why)
	}
	for _, b := range r.RuleConflicts {
		fmt.Fprintf(&sb, "rule conflict: op %d %s: %s\n", b.Op, b.OpType, b.Why)
	}
	for _, b := range r.RuleErrors {
		fmt.Fprintf(&sb, "rule error: op %d %s: %s: it reads its inputs replicated\n", b.Op, b.OpType, b.Why)
	}
	for _, b := range r.Fallbacks {
		fmt.Fprintf(&sb, "fallback: op %d %s: %s: it reads and writes every arg replicated\n", b.Op, b.OpType, b.Why)
	}
	for _, x := range r.Reshards {
		have, want := ir.FormatInts(x.Have), ir.FormatInts(x.Want)
		if x.Mesh != x.WantMesh {
			have, want = "@"+x.Mesh+have, "@"+x.WantMesh+want
		}
		if len(x.Partial) > 0 {
			have += " partial " + ir.FormatPartial(x.Partial)
		}
		if len(x.WantPartial) > 0 {
			want += " partial " + ir.FormatPartial(x.WantPartial)
		}
		verb := "reads"
		if x.Output {
			verb = "gives"
		}
		fmt.Fprintf(&sb, "reshard: op %d %s %s %s as %s, which is %s\n", x.Op, x.OpType, verb, x.Var, want, have)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}
