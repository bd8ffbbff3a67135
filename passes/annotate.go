package passes

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
)

// AnnotatePass declares a mesh and gives a var a dist, in the text
// format's words, so that a pipeline can place what completion starts
// from (a weight split for tensor parallelism) without editing the text.
func AnnotatePass() *Pass {
	return &Pass{
		Name: "annotate",
		Doc: `declare a mesh or give a var a dist, as the text format writes them
mesh="world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]" declares a
mesh (a mesh line without its keyword; one already declared alike is
kept, otherwise refused); var="fc_0.w_0 @world[-1, 1]" gives var
fc_0.w_0 of the main program's global block that dist (a var with
another dist is refused). Give either or both, the mesh first; run it
again for more vars. The module is verified after, and left unchanged
on any error. complete infers the rest from such annotations.`,
		Options: []Option{
			{Name: "mesh", Kind: OptString, Default: "", Doc: "a mesh to declare: NAME shape [..] dims [..] ranks [..]"},
			{Name: "var", Kind: OptString, Default: "", Doc: "a var and its dist: NAME @MESH[..] [partial [..]] [local [..]]"},
		},
		Run: func(ctx *Context, m *ir.Module) error {
			return Annotate(m, ctx.String("mesh"), ctx.String("var"))
		},
	}
}

// Annotate is the annotate pass: it declares mesh (text as in the
// pass's Doc, "" for none) and gives a var the dist varDist names ("" for
// none). On error m is unchanged.
func Annotate(m *ir.Module, mesh, varDist string) error {
	if mesh == "" && varDist == "" {
		return errors.New(`give mesh="NAME shape [..] dims [..] ranks [..]" or var="NAME @MESH[..]", or both`)
	}
	if m.Main == nil || len(m.Main.Blocks) == 0 {
		return errors.New("no main program")
	}
	var pm *ir.ProcessMesh
	if mesh != "" {
		var err error
		if pm, err = ir.ParseMesh("mesh", mesh); err != nil {
			return err
		}
		if old := m.Mesh(pm.Name); old != nil {
			if !sameMesh(old, pm) {
				return fmt.Errorf("mesh %s is declared already, otherwise", pm.Name)
			}
			pm = nil // declared alike: nothing to add
		}
	}
	var v *ir.Var
	var d *ir.TensorDist
	if varDist != "" {
		name, text, ok := strings.Cut(strings.TrimSpace(varDist), " ")
		if !ok {
			return fmt.Errorf("var=%q: want a var name, a space and its dist (@MESH[..])", varDist)
		}
		if v = m.Main.Global().Var(name); v == nil {
			return fmt.Errorf("var=%q: the main program's global block declares no var %s", varDist, name)
		}
		if !v.Type.IsTensor() {
			return fmt.Errorf("var %s is %s: only a tensor has a dist", name, v.Type)
		}
		var err error
		if d, err = ir.ParseDist("var "+name, text); err != nil {
			return err
		}
		if v.Dist != nil {
			return fmt.Errorf("var %s has a dist already (%s)", name, v.Dist)
		}
	}
	if pm != nil {
		m.Meshes = append(m.Meshes, pm)
	}
	if v != nil {
		v.Dist = d
	}
	if err := ir.Verify(m); err != nil {
		if v != nil {
			v.Dist = nil
		}
		if pm != nil {
			m.Meshes = m.Meshes[:len(m.Meshes)-1]
		}
		return err
	}
	return nil
}

// sameMesh reports whether a and b declare the same mesh.
func sameMesh(a, b *ir.ProcessMesh) bool {
	return a.Name == b.Name && slices.Equal(a.Shape, b.Shape) && slices.Equal(a.DimNames, b.DimNames) && slices.Equal(a.ProcessIDs, b.ProcessIDs)
}
