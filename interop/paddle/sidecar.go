package paddle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/distpass/distpass/ir"
)

// The sidecar is a small JSON document beside a ProgramDesc file that holds
// what the proto cannot: distpass's annotations and module-level tables.
//
//	{
//	  "format": "distpass-paddle-sidecar",
//	  "version": 1,
//	  "module": "mlp",
//	  "meshes": [{"name": "world", "shape": [2, 2], "dims": ["dp", "mp"], "ranks": [0, 1, 2, 3]}],
//	  "groups": [{"id": 0, "ranks": [0, 1, 2, 3]}],
//	  "param_grads": [{"param": "w", "grad": "w@GRAD"}],
//	  "attrs": [...],
//	  "main": {
//	    "rank": 3,
//	    "vars": [{"block": 0, "name": "x", "flags": ["is_data"],
//	              "dist": {"mesh": "world", "dims_mapping": [0, -1], "partial": [{"dim": 1, "reduce": "sum"}]}}],
//	    "ops": [{"block": 0, "pos": 2, "id": 9, "fwd": 3,
//	             "dist": {"mesh": "world", "impl_type": "matmul_v2", "impl_index": 0, "recompute": false,
//	                      "inputs": [{"name": "x", "dims_mapping": [0, -1]}], "outputs": [...]},
//	             "attrs": [...]}]
//	  },
//	  "startup": {"program": "<base64 ProgramDesc>", "vars": [...], "ops": [...]}
//	}
//
// or, when the startup program is a ProgramDesc file of its own
// (ExportOptions.Startup), "startup": {"separate": true, "vars": [...], ...}.
//
// Vars are keyed by block index and name, ops by block index and position
// in the block; a var's "dist" is the IR JSON's (its "partial" and
// "local" as there). "id" is an op's id when it is not its number in program
// order (Import numbers ops 1, 2, ...); "attrs" (in ir.EncodeAttrsJSON's
// form) replaces the attrs read from the proto when some value there is
// rounded or cannot be held, and the module's "attrs" the module attrs
// when it has some the proto cannot hold. "rank" is a partitioned program's
// rank. The startup program is a ProgramDesc of its own, base64 in
// "program", or in its own file, which "separate" says so that the
// sidecar is not read without it. Members are left out when empty.
const (
	sidecarFormat  = "distpass-paddle-sidecar"
	sidecarVersion = 1
)

// sidecar collects what the proto cannot hold while a module is exported.
// A nil sidecar drops it all.
type sidecar struct {
	first string // the first thing noted, for Export's error
	doc   sidecarDoc
}

type sidecarDoc struct {
	Format     string          `json:"format"`
	Version    int             `json:"version"`
	Module     string          `json:"module,omitempty"`
	Meshes     []*sideMesh     `json:"meshes,omitempty"`
	Groups     []*sideGroup    `json:"groups,omitempty"`
	ParamGrads []*sideGrad     `json:"param_grads,omitempty"`
	Attrs      json.RawMessage `json:"attrs,omitempty"`
	Main       *progSidecar    `json:"main,omitempty"`
	Startup    *progSidecar    `json:"startup,omitempty"`
}

type sideMesh struct {
	Name  string   `json:"name"`
	Shape []int    `json:"shape"`
	Dims  []string `json:"dims"`
	Ranks []int    `json:"ranks"`
}

type sideGroup struct {
	ID    int   `json:"id"`
	Ranks []int `json:"ranks"`
}

type sideGrad struct {
	Param string `json:"param"`
	Grad  string `json:"grad,omitempty"`
}

// progSidecar is what one program adds.
type progSidecar struct {
	Program  []byte      `json:"program,omitempty"`  // the startup program's ProgramDesc
	Separate bool        `json:"separate,omitempty"` // the startup program is a file of its own
	Rank     *int        `json:"rank,omitempty"`
	Vars     []*varEntry `json:"vars,omitempty"`
	Ops      []*opEntry  `json:"ops,omitempty"`
}

type varEntry struct {
	Block int
	Name  string
	Flags ir.VarFlags
	Dist  *ir.TensorDist
	Attrs ir.Attrs
}

type opEntry struct {
	Block int
	Pos   int
	ID    *int64
	Fwd   int64
	Dist  *ir.OpDist
	Attrs ir.Attrs
}

func newSidecar() *sidecar {
	return &sidecar{doc: sidecarDoc{Format: sidecarFormat, Version: sidecarVersion}}
}

// note records that what cannot go in the proto.
func (sc *sidecar) note(what string) {
	if sc != nil && sc.first == "" {
		sc.first = what
	}
}

// prog returns the entries of program name ("main" or "startup").
func (sc *sidecar) prog(name string) *progSidecar {
	if sc == nil {
		return &progSidecar{}
	}
	if name == "main" {
		if sc.doc.Main == nil {
			sc.doc.Main = &progSidecar{}
		}
		return sc.doc.Main
	}
	if sc.doc.Startup == nil {
		sc.doc.Startup = &progSidecar{}
	}
	return sc.doc.Startup
}

// module records the module-level tables.
func (sc *sidecar) module(m *ir.Module) {
	if sc == nil {
		return
	}
	sc.doc.Module = m.Name
	for _, pm := range m.Meshes {
		if pm == nil {
			continue
		}
		sc.note("mesh " + pm.Name)
		sc.doc.Meshes = append(sc.doc.Meshes, &sideMesh{Name: pm.Name, Shape: orNone(pm.Shape), Dims: orNone(pm.DimNames), Ranks: orNone(pm.ProcessIDs)})
	}
	for _, g := range m.Groups {
		sc.note(fmt.Sprintf("process group %d", g.ID))
		sc.doc.Groups = append(sc.doc.Groups, &sideGroup{ID: g.ID, Ranks: orNone(g.Ranks)})
	}
	for _, pg := range m.ParamGrads {
		sc.note("params-grads entry " + pg.Param)
		sc.doc.ParamGrads = append(sc.doc.ParamGrads, &sideGrad{Param: pg.Param, Grad: pg.Grad})
	}
	for _, a := range m.Attrs {
		if !strings.HasPrefix(a.Name, reservedPrefix) {
			// The module's own attrs: keep the whole list.
			if raw, err := ir.EncodeAttrsJSON(m.Attrs); err == nil {
				sc.doc.Attrs = raw
			}
			break
		}
	}
}

func orNone[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// The JSON forms of the entries.

type jsonVarEntry struct {
	Block int             `json:"block"`
	Name  string          `json:"name"`
	Flags []string        `json:"flags,omitempty"`
	Dist  *jsonTensorDist `json:"dist,omitempty"`
	Attrs json.RawMessage `json:"attrs,omitempty"`
}

type jsonTensorDist struct {
	Mesh        string        `json:"mesh"`
	DimsMapping []int         `json:"dims_mapping"`
	Partial     []jsonPartial `json:"partial,omitempty"`
	Local       []int         `json:"local,omitempty"`
}

type jsonPartial struct {
	Dim    int    `json:"dim"`
	Reduce string `json:"reduce"`
}

type jsonOpEntry struct {
	Block int             `json:"block"`
	Pos   int             `json:"pos"`
	ID    *int64          `json:"id,omitempty"`
	Fwd   int64           `json:"fwd,omitempty"`
	Dist  *jsonOpDist     `json:"dist,omitempty"`
	Attrs json.RawMessage `json:"attrs,omitempty"`
}

type jsonOpDist struct {
	Mesh      string        `json:"mesh"`
	ImplType  string        `json:"impl_type"`
	ImplIndex int           `json:"impl_index"`
	Recompute bool          `json:"recompute"`
	Inputs    []jsonArgDist `json:"inputs"`
	Outputs   []jsonArgDist `json:"outputs"`
}

type jsonArgDist struct {
	Name        string `json:"name"`
	DimsMapping []int  `json:"dims_mapping"`
}

// flagNames are the var flags the sidecar holds.
var flagNames = []struct {
	flag ir.VarFlags
	name string
}{{ir.FlagIsData, "is_data"}, {ir.FlagNeedClip, "need_clip"}, {ir.FlagTrainable, "trainable"}}

func (v *varEntry) MarshalJSON() ([]byte, error) {
	j := jsonVarEntry{Block: v.Block, Name: v.Name}
	for _, f := range flagNames {
		if v.Flags&f.flag != 0 {
			j.Flags = append(j.Flags, f.name)
		}
	}
	if d := v.Dist; d != nil {
		j.Dist = &jsonTensorDist{Mesh: d.Mesh, DimsMapping: orNone(d.DimsMapping)}
		for _, p := range d.Partial {
			j.Dist.Partial = append(j.Dist.Partial, jsonPartial{Dim: p.Dim, Reduce: p.Reduce.String()})
		}
		j.Dist.Local = d.Local
	}
	if v.Attrs != nil {
		raw, err := ir.EncodeAttrsJSON(v.Attrs)
		if err != nil {
			return nil, fmt.Errorf("block %d var %q: %v", v.Block, v.Name, err)
		}
		j.Attrs = raw
	}
	return json.Marshal(j)
}

func (v *varEntry) UnmarshalJSON(b []byte) error {
	var j jsonVarEntry
	if err := strictUnmarshal(b, &j); err != nil {
		return err
	}
	*v = varEntry{Block: j.Block, Name: j.Name}
	where := fmt.Sprintf("block %d var %q", j.Block, j.Name)
	for _, n := range j.Flags {
		found := false
		for _, f := range flagNames {
			if f.name == n {
				v.Flags |= f.flag
				found = true
			}
		}
		if !found {
			return fmt.Errorf("%s: unknown flag %q", where, n)
		}
	}
	if d := j.Dist; d != nil {
		v.Dist = &ir.TensorDist{Mesh: d.Mesh, DimsMapping: orNone(d.DimsMapping)}
		for _, p := range d.Partial {
			r, ok := ir.ParseReduce(p.Reduce)
			if !ok {
				return fmt.Errorf("%s: unknown reduce %q", where, p.Reduce)
			}
			v.Dist.Partial = append(v.Dist.Partial, ir.Partial{Dim: p.Dim, Reduce: r})
		}
		if len(d.Local) > 0 {
			v.Dist.Local = d.Local
		}
	}
	if j.Attrs != nil {
		as, err := ir.DecodeAttrsJSON(j.Attrs)
		if err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		v.Attrs = orNone(as)
	}
	return nil
}

func (o *opEntry) MarshalJSON() ([]byte, error) {
	j := jsonOpEntry{Block: o.Block, Pos: o.Pos, ID: o.ID, Fwd: o.Fwd}
	if d := o.Dist; d != nil {
		j.Dist = &jsonOpDist{Mesh: d.Mesh, ImplType: d.ImplType, ImplIndex: d.ImplIndex, Recompute: d.Recompute,
			Inputs: argDistsJSON(d.Inputs), Outputs: argDistsJSON(d.Outputs)}
	}
	if o.Attrs != nil {
		raw, err := ir.EncodeAttrsJSON(o.Attrs)
		if err != nil {
			return nil, fmt.Errorf("block %d op %d: %v", o.Block, o.Pos, err)
		}
		j.Attrs = raw
	}
	return json.Marshal(j)
}

func argDistsJSON(as []ir.ArgDist) []jsonArgDist {
	out := make([]jsonArgDist, len(as))
	for i, a := range as {
		out[i] = jsonArgDist{Name: a.Name, DimsMapping: orNone(a.DimsMapping)}
	}
	return out
}

func argDistsIR(js []jsonArgDist) []ir.ArgDist {
	if len(js) == 0 {
		return nil
	}
	out := make([]ir.ArgDist, len(js))
	for i, a := range js {
		out[i] = ir.ArgDist{Name: a.Name, DimsMapping: orNone(a.DimsMapping)}
	}
	return out
}

func (o *opEntry) UnmarshalJSON(b []byte) error {
	var j jsonOpEntry
	if err := strictUnmarshal(b, &j); err != nil {
		return err
	}
	*o = opEntry{Block: j.Block, Pos: j.Pos, ID: j.ID, Fwd: j.Fwd}
	if d := j.Dist; d != nil {
		o.Dist = &ir.OpDist{Mesh: d.Mesh, ImplType: d.ImplType, ImplIndex: d.ImplIndex, Recompute: d.Recompute,
			Inputs: argDistsIR(d.Inputs), Outputs: argDistsIR(d.Outputs)}
	}
	if j.Attrs != nil {
		as, err := ir.DecodeAttrsJSON(j.Attrs)
		if err != nil {
			return fmt.Errorf("block %d op %d: %v", j.Block, j.Pos, err)
		}
		o.Attrs = orNone(as)
	}
	return nil
}

func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// ExportWithSidecar encodes the main program of m as a ProgramDesc, and
// what the proto cannot hold as the sidecar, a small JSON document (see
// the package documentation), the startup program in it. ImportWithSidecar
// reads the pair back into a module Equal to m.
func ExportWithSidecar(m *ir.Module) (pb []byte, side []byte, err error) {
	f, err := ExportFiles(m, ExportOptions{Sidecar: true})
	if err != nil {
		return nil, nil, err
	}
	return f.Main, f.Sidecar, nil
}

// encode returns the sidecar's JSON.
func (sc *sidecar) encode() ([]byte, error) {
	if p := sc.doc.Main; p != nil && p.Rank == nil && len(p.Vars) == 0 && len(p.Ops) == 0 {
		sc.doc.Main = nil
	}
	side, err := json.MarshalIndent(&sc.doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("paddle: sidecar: %v", err)
	}
	return append(side, '\n'), nil
}

// ImportWithSidecar reads a ProgramDesc and the sidecar ExportWithSidecar
// wrote beside it. An empty sidecar is the same as Import.
func ImportWithSidecar(name string, pb, side []byte) (*ir.Module, error) {
	return ImportFiles(name, "", &Files{Main: pb, Sidecar: side})
}

// ImportFiles reads the files ExportFiles wrote: f.Main, the main
// program's ProgramDesc (name is its file's name, as Import takes it), and
// when not nil f.Startup, the startup program's (startupName is its file's
// name, for errors), and f.Sidecar (f.SidecarName names it in errors;
// without one it is "<name> sidecar"). A startup file's version and op
// version map are kept as module attrs of their own (paddle.startup.*),
// so that a pair Paddle wrote exports back to its bytes.
//
// The files must agree: a startup file must be a startup program (see
// checkStartup), and what the sidecar says of an op or var the
// ProgramDescs also hold (an attr's value, is_target, the file's version)
// must be what they hold, or the import fails naming the op or var, both
// values and both files; the sidecar only adds what a ProgramDesc cannot
// hold. Two sidecar entries for one var or op, and integers the text
// format cannot hold (ranks, group ids, mappings beyond 32 bits), are
// refused too, so that what imports prints as text that parses back.
func ImportFiles(name, startupName string, f *Files) (*ir.Module, error) {
	m, norms, err := importNormalised(name, f.Main)
	if err != nil {
		return nil, err
	}
	f.Normalised = norms
	sideName := f.SidecarName
	if sideName == "" {
		sideName = name + " sidecar"
	}
	var doc *sidecarDoc
	if len(bytes.TrimSpace(f.Sidecar)) != 0 {
		doc = new(sidecarDoc)
		if err := strictUnmarshal(f.Sidecar, doc); err != nil {
			return nil, fmt.Errorf("%s: %v", sideName, err)
		}
		if err := checkModule(doc); err != nil {
			return nil, fmt.Errorf("%s: %v", sideName, err)
		}
	}
	var ps *progSidecar
	if doc != nil {
		ps = doc.Startup
	}
	progFile := [2]string{name, ""} // the files of main and startup, for errors
	switch {
	case f.Startup != nil && ps != nil && !ps.Separate:
		return nil, fmt.Errorf("%s: startup: the sidecar holds the startup program, and a startup file was given too", sideName)
	case f.Startup != nil:
		if startupName == "" {
			startupName = name + " startup file"
		}
		if err := importStartup(m, startupName, f.Startup, f); err != nil {
			return nil, err
		}
		progFile[1] = startupName
	case ps != nil && ps.Separate:
		return nil, fmt.Errorf("%s: startup: the startup program is a ProgramDesc file of its own, not given", sideName)
	case ps != nil:
		progFile[1] = name + " startup"
		if err := importStartup(m, progFile[1], ps.Program, f); err != nil {
			return nil, err
		}
	}
	if m.Startup != nil {
		if err := checkStartup(m); err != nil {
			return nil, fmt.Errorf("%s: not a startup program: %v", progFile[1], err)
		}
	}
	if doc == nil {
		return m, nil
	}
	a := &applier{side: sideName, files: progFile}
	if err := a.module(m, doc); err != nil {
		return nil, err
	}
	if err := a.programs(m, doc); err != nil {
		return nil, err
	}
	return m, nil
}

// importStartup decodes a startup ProgramDesc into m.Startup, its file's
// fields becoming m's paddle.startup.* attrs.
func importStartup(m *ir.Module, name string, data []byte, f *Files) error {
	sm, norms, err := importNormalised(name, data)
	if err != nil {
		return err
	}
	f.Normalised = append(f.Normalised, norms...)
	m.Startup = sm.Main
	m.Startup.Name = "startup"
	from := [...]string{mainFacts.version, mainFacts.opVersionNames, mainFacts.opVersions, mainFacts.legacy}
	to := [...]string{startupFacts.version, startupFacts.opVersionNames, startupFacts.opVersions, startupFacts.legacy}
	for i, n := range from {
		if v := sm.Attrs.Get(n); v != nil {
			m.Attrs.Set(to[i], v)
		}
	}
	return nil
}
