package complete

import (
	"fmt"
	"strings"
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
		if x.Name() == name {
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
	os, err := r.Origin(name)
	if err != nil {
		return "", err
	}
	e := r.e
	var sb strings.Builder
	for _, o := range os {
		if o.MeshDim < 0 {
			fmt.Fprintf(&sb, "%s dim %d: replicated\n", name, o.Dim)
			continue
		}
		mesh := ""
		for v, x := range e.g.vars {
			if x.Name() == name {
				pm := e.s.mesh[v]
				mesh = fmt.Sprintf(" (%s)", pm.DimNames[o.MeshDim])
				break
			}
		}
		fmt.Fprintf(&sb, "%s dim %d: split along mesh dim %d%s, from %s\n", name, o.Dim, o.MeshDim, mesh, o.Annotation)
		for _, h := range o.Hops {
			fmt.Fprintf(&sb, "  op %d %s: %s dim %d -> %s dim %d\n", h.Op, h.OpType, h.From, h.FromDim, h.To, h.ToDim)
		}
	}
	return sb.String(), nil
}
