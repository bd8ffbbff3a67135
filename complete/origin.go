package complete

import (
	"fmt"
	"strings"

	"github.com/distpass/distpass/ir"
)

// Hop is one step of a mesh dim's way to a var: op Op carried it from
// dim FromDim of var From to dim ToDim of var To.
type Hop struct {
	Op      int64  `json:"op"`
	OpType  string `json:"op_type"`
	From    string `json:"from"`
	FromDim int    `json:"from_dim"`
	To      string `json:"to"`
	ToDim   int    `json:"to_dim"`
}

// DimOrigin is where one dim of a var got its mesh dim: the annotation
// it came from ("var x" or "op 3 matmul_v2") and the hops from it, first
// hop first. A replicated dim has MeshDim -1 and no origin.
type DimOrigin struct {
	Dim        int    `json:"dim"`
	MeshDim    int    `json:"mesh_dim"`
	Annotation string `json:"annotation,omitempty"`
	Hops       []Hop  `json:"hops,omitempty"`
}

// Origin returns, for each dim of the var named name (the first of that
// name in block order), where its sharding came from.
func (r *Report) Origin(name string) ([]DimOrigin, error) {
	e := r.e
	for v, x := range e.g.vars {
		if e.g.dense[v] && x.Name() == name {
			out := make([]DimOrigin, len(e.s.dims[v]))
			for d, k := range e.s.dims[v] {
				out[d] = DimOrigin{Dim: d, MeshDim: k}
				if k >= 0 {
					out[d].Annotation, out[d].Hops = e.chain(int32(v), d)
				}
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("no dense-tensor var %s in the main program", name)
}

// chain follows the origins of var v's dim d back to an annotation.
func (e *engine) chain(v int32, d int) (string, []Hop) {
	var hops []Hop
	for range len(e.g.vars) + 1 {
		st := e.s.origin[v][d]
		if st.op < 0 {
			if e.s.closed[v] {
				return "var " + e.g.vars[v].Name(), reverse(hops)
			}
			return "", reverse(hops)
		}
		n := &e.g.ops[st.op]
		h := Hop{Op: n.op.ID, OpType: n.op.Type, To: e.g.vars[v].Name(), ToDim: d}
		if st.from < 0 {
			hops = append(hops, h)
			return n.op.String(), reverse(hops)
		}
		h.From, h.FromDim = e.g.vars[st.from].Name(), int(st.dim)
		hops = append(hops, h)
		v, d = st.from, int(st.dim)
	}
	return "", reverse(hops) // a cycle: settled dims overwrote an origin
}

func reverse(h []Hop) []Hop {
	for i, j := 0, len(h)-1; i < j; i, j = i+1, j-1 {
		h[i], h[j] = h[j], h[i]
	}
	return h
}

// annotation names the annotation var v's dim d came from.
func (e *engine) annotation(v int32, d int) string {
	a, _ := e.chain(v, d)
	return a
}

// annotationOf names the annotation a proposal's source came from.
func (e *engine) annotationOf(st step) string {
	if st.from >= 0 {
		return e.annotation(st.from, int(st.dim))
	}
	if st.op >= 0 {
		return e.g.ops[st.op].op.String()
	}
	return ""
}

// Explain spells Origin for a person: a line per dim.
func (r *Report) Explain(name string) (string, error) {
	for v, x := range r.e.g.vars {
		if r.e.g.dense[v] && x.Name() == name {
			return r.explain(int32(v)), nil
		}
	}
	return "", fmt.Errorf("no dense-tensor var %s in the main program", name)
}

// ExplainVar is Explain of var v of the completed module's main program
// (any block's), "" for a var completion did not see (not a dense
// tensor of the main program). It finds v by identity, so it answers for
// the module as completion left it (the pass explorer asks right after
// the pass).
func (r *Report) ExplainVar(v *ir.Var) string {
	i, ok := r.e.g.id(v)
	if !ok {
		return ""
	}
	return r.explain(i)
}

func (r *Report) explain(v int32) string {
	e := r.e
	name := e.g.vars[v].Name()
	var sb strings.Builder
	for d, k := range e.s.dims[v] {
		if k < 0 {
			fmt.Fprintf(&sb, "%s dim %d: replicated\n", name, d)
			continue
		}
		a, hops := e.chain(v, d)
		fmt.Fprintf(&sb, "%s dim %d: split along mesh dim %d (%s), from %s\n", name, d, k, e.s.mesh[v].DimNames[k], a)
		for _, h := range hops {
			fmt.Fprintf(&sb, "  op %d %s: %s dim %d -> %s dim %d\n", h.Op, h.OpType, h.From, h.FromDim, h.To, h.ToDim)
		}
	}
	return sb.String()
}
