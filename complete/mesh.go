package complete

import (
	"fmt"

	"github.com/distpass/distpass/ir"
)

// meshes gives every op and var a mesh (see the package doc).
func (e *engine) meshes() error {
	g, s := e.g, &e.s
	for i, v := range g.vars {
		if v.Dist == nil {
			continue
		}
		pm := e.m.Mesh(v.Dist.Mesh)
		if pm == nil {
			return fmt.Errorf("complete: var %s: unknown mesh %s", v.Name(), v.Dist.Mesh)
		}
		s.mesh[i] = pm
	}
	for i := range g.ops {
		n := &g.ops[i]
		if d := n.op.Dist; d != nil {
			if n.mesh = e.m.Mesh(d.Mesh); n.mesh == nil {
				return fmt.Errorf("complete: %s: unknown mesh %s", n.op, d.Mesh)
			}
		}
	}
	if len(e.m.Meshes) == 1 {
		pm := e.m.Meshes[0]
		for i := range g.ops {
			if g.ops[i].mesh == nil {
				g.ops[i].mesh = pm
			}
		}
		for i := range s.mesh {
			if s.mesh[i] == nil {
				s.mesh[i] = pm
			}
		}
		return nil
	}
	// In settling order, an op takes the mesh of its first annotated arg
	// (inputs, then outputs), else of its first arg given one by its
	// producer, else the nearest op's before it, else after it; its args
	// without a mesh take the op's.
	firstRead := make([]int32, len(g.vars)) // the first op reading each var
	for i := range firstRead {
		firstRead[i] = -1
	}
	for j := len(g.ops) - 1; j >= 0; j-- {
		for _, v := range g.ops[j].ins() {
			if v >= 0 {
				firstRead[v] = int32(j)
			}
		}
	}
	for i := range g.ops {
		n := &g.ops[i]
		for pass := 0; pass < 2 && n.mesh == nil; pass++ {
			// An annotated arg's mesh first: the user placed it.
			for _, v := range n.args {
				if v >= 0 && s.mesh[v] != nil && (pass == 1 || s.closed[v]) {
					n.mesh = s.mesh[v]
					break
				}
			}
		}
		if n.mesh == nil && !anyDense(n.ins()) {
			// A source (a fill): where its value is read first.
			n.mesh = e.firstReader(i, firstRead)
		}
		if n.mesh == nil && i > 0 {
			n.mesh = g.ops[i-1].mesh
		}
		if n.mesh != nil {
			for _, v := range n.args {
				if v >= 0 && s.mesh[v] == nil {
					s.mesh[v] = n.mesh
				}
			}
		}
	}
	for i := len(g.ops) - 1; i >= 0; i-- {
		n := &g.ops[i]
		if n.mesh == nil && i+1 < len(g.ops) {
			n.mesh = g.ops[i+1].mesh
		}
		if n.mesh == nil {
			n.mesh = e.m.Meshes[0] // no op has a mesh
		}
		for _, v := range n.args {
			if v >= 0 && s.mesh[v] == nil {
				s.mesh[v] = n.mesh
			}
		}
	}
	for i := range s.mesh {
		if s.mesh[i] == nil {
			s.mesh[i] = e.m.Meshes[0] // used by no op
		}
	}
	return nil
}

func anyDense(args []int32) bool {
	for _, v := range args {
		if v >= 0 {
			return true
		}
	}
	return false
}

// firstReader returns the mesh of the first op to read an output of op
// i (firstRead: per var, its first reader), when that op has a mesh of
// its own (annotated, or from its own annotated args), or nil.
func (e *engine) firstReader(i int, firstRead []int32) *ir.ProcessMesh {
	g := e.g
	j := int32(-1)
	for _, v := range g.ops[i].outs() {
		if v >= 0 && firstRead[v] > int32(i) && (j < 0 || firstRead[v] < j) {
			j = firstRead[v]
		}
	}
	if j < 0 {
		return nil
	}
	r := &g.ops[j]
	if r.mesh != nil {
		return r.mesh
	}
	for _, a := range r.args {
		if a >= 0 && e.s.closed[a] && e.s.mesh[a] != nil {
			return e.s.mesh[a]
		}
	}
	return nil
}
