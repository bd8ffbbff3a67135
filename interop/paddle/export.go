package paddle

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/distpass/distpass/ir"
)

// ExportOptions change what Export does with what the ProgramDesc cannot
// hold, and where the startup program goes.
type ExportOptions struct {
	// Drop leaves out what the proto cannot hold (tensor and op dists,
	// fwd, op ids other than 1, 2, ..., the process-group table, meshes,
	// params-grads, the startup program unless Startup, var flags other
	// than need_check_feed and stop_gradient, exact values of attrs the
	// proto rounds) instead of failing.
	Drop bool
	// Sidecar keeps what the protos cannot hold in Files.Sidecar (see the
	// package documentation). It does not go with Drop.
	Sidecar bool
	// Startup writes the startup program as a ProgramDesc of its own,
	// Files.Startup, as Paddle saves a main and a startup program; the
	// module must have one. Without it the startup program can only
	// travel base64 inside the sidecar.
	Startup bool
}

// Files are the files of one exported module: the main program's
// ProgramDesc, the startup program's (with ExportOptions.Startup) and the
// sidecar (with ExportOptions.Sidecar); those not asked for are nil.
// SidecarName is the sidecar's file name, which ImportFiles's errors
// name; ExportFiles leaves it empty.
type Files struct {
	Main, Startup, Sidecar []byte
	SidecarName            string
	// Normalised is what ImportFiles normalised to read Main and
	// Startup, set by it.
	Normalised []Normalisation
}

// Export encodes the main program of m as a ProgramDesc protobuf file.
// For a module that Import made, the bytes are the file's. It fails, naming
// the first such thing, when m carries what the proto cannot hold: use
// ExportWithSidecar to keep it, or ExportWith and Drop to lose it.
func Export(m *ir.Module) ([]byte, error) { return ExportWith(m, ExportOptions{}) }

// ExportWith is Export with options. It returns the main program only, so
// it refuses Sidecar and Startup, which ExportFiles serves.
func ExportWith(m *ir.Module, opts ExportOptions) ([]byte, error) {
	if opts.Sidecar || opts.Startup {
		return nil, errors.New("paddle: ExportWith writes one file: use ExportFiles for a sidecar or a startup file")
	}
	f, err := ExportFiles(m, opts)
	if err != nil {
		return nil, err
	}
	return f.Main, nil
}

// ExportFiles encodes m as the files opts asks for. ImportFiles reads them
// back into a module Equal to m, when nothing was dropped.
func ExportFiles(m *ir.Module, opts ExportOptions) (*Files, error) {
	if opts.Drop && opts.Sidecar {
		return nil, errors.New("paddle: Drop and Sidecar do not go together")
	}
	var sc *sidecar
	if !opts.Drop {
		sc = newSidecar()
	}
	f, err := exportModule(m, sc, opts.Startup)
	if err != nil {
		return nil, err
	}
	if opts.Sidecar {
		if f.Sidecar, err = sc.encode(); err != nil {
			return nil, err
		}
	} else if sc != nil && sc.first != "" {
		return nil, &UnrepresentableError{What: sc.first}
	}
	return f, nil
}

// UnrepresentableError is Export's error for a module that holds what a
// ProgramDesc cannot (a mesh, a dist, a startup program, …) when neither
// a sidecar nor dropping it was asked for. What names the first such
// thing. Callers with other names for the two remedies (a CLI's flags)
// may say them instead of Error's Go names.
type UnrepresentableError struct{ What string }

func (e *UnrepresentableError) Error() string {
	return "paddle: " + e.What + ": the ProgramDesc cannot hold it (use ExportWithSidecar, or drop it with ExportOptions.Drop)"
}

// exportModule writes the main program and, apart or (when sc keeps
// things) into the sidecar, the startup program.
func exportModule(m *ir.Module, sc *sidecar, apart bool) (*Files, error) {
	if m == nil || m.Main == nil {
		return nil, errors.New("paddle: module has no main program")
	}
	if apart && m.Startup == nil {
		return nil, errors.New("paddle: module has no startup program to write")
	}
	e := &encoder{sc: sc}
	sc.module(m)
	if err := e.program(m.Main, sc.prog("main"), m.Attrs, mainFacts); err != nil {
		return nil, err
	}
	if err := e.moduleAttrs(m); err != nil {
		return nil, err
	}
	f := &Files{Main: e.b}
	if m.Startup == nil || (!apart && sc == nil) {
		return f, nil
	}
	if !apart {
		sc.note("startup program")
	}
	e2 := &encoder{sc: sc}
	ps := sc.prog("startup")
	if err := e2.program(m.Startup, ps, m.Attrs, startupFacts); err != nil {
		return nil, err
	}
	if apart {
		f.Startup, ps.Separate = e2.b, true
	} else {
		ps.Program = e2.b
	}
	return f, nil
}

// encoder appends a ProgramDesc to b. Nested messages are written in place:
// a one-byte length is reserved and, when the message turns out longer than
// 127 bytes, its bytes are moved right to make room.
type encoder struct {
	b  []byte
	sc *sidecar // nil: dropping
}

func (e *encoder) tag(num int, typ protowire.Type) {
	e.b = protowire.AppendTag(e.b, protowire.Number(num), typ)
}

func (e *encoder) varint(num int, v uint64) {
	e.tag(num, protowire.VarintType)
	e.b = protowire.AppendVarint(e.b, v)
}

// int32 writes an int32 as Paddle does: negatives sign-extended to 64 bits.
func (e *encoder) int32(num int, v int32) { e.varint(num, uint64(int64(v))) }

func (e *encoder) bool(num int, v bool) {
	var x uint64
	if v {
		x = 1
	}
	e.varint(num, x)
}

func (e *encoder) str(num int, s string) {
	e.tag(num, protowire.BytesType)
	e.b = protowire.AppendString(e.b, s)
}

func (e *encoder) fixed32(num int, v uint32) {
	e.tag(num, protowire.Fixed32Type)
	e.b = protowire.AppendFixed32(e.b, v)
}

func (e *encoder) fixed64(num int, v uint64) {
	e.tag(num, protowire.Fixed64Type)
	e.b = protowire.AppendFixed64(e.b, v)
}

// begin starts a nested message field and returns its start for end.
func (e *encoder) begin(num int) int {
	e.tag(num, protowire.BytesType)
	e.b = append(e.b, 0)
	return len(e.b)
}

// end closes the nested message begun at start.
func (e *encoder) end(start int) {
	n := len(e.b) - start
	if sz := protowire.SizeVarint(uint64(n)); sz > 1 {
		e.b = append(e.b, make([]byte, sz-1)...)
		copy(e.b[start+sz-1:], e.b[start:start+n])
	}
	protowire.AppendVarint(e.b[:start-1], uint64(n))
}

// fileFacts names the module attrs that hold a ProgramDesc's own fields
// (version, op_version_map, the legacy field 3): the main program's, and
// the startup program's, which a startup file Paddle wrote has too.
type fileFacts struct{ version, opVersionNames, opVersions, legacy string }

var (
	mainFacts    = fileFacts{resVersion, resOpVersionNames, resOpVersions, resLegacy}
	startupFacts = fileFacts{resStartupVersion, resStartupOpVersionNames, resStartupOpVersions, resStartupLegacy}
)

func (f fileFacts) has(name string) bool {
	return name == f.version || name == f.opVersionNames || name == f.opVersions || name == f.legacy
}

// program writes the blocks of p, then the ProgramDesc fields that attrs
// hold under the names of facts.
func (e *encoder) program(p *ir.Program, entries *progSidecar, attrs ir.Attrs, facts fileFacts) error {
	if p.Rank >= 0 {
		entries.Rank = &p.Rank
		e.sc.note(p.Name + " program's rank")
	}
	ids := int64(1)
	for bi, b := range p.Blocks {
		if b == nil {
			return fmt.Errorf("paddle: %s block %d is nil", p.Name, bi)
		}
		if err := e.block(p, bi, b, &ids, entries); err != nil {
			return err
		}
	}
	if v := attrs.Get(facts.legacy); v != nil {
		s, ok := v.(ir.String)
		raw, err := base64.StdEncoding.DecodeString(string(s))
		if !ok || err != nil {
			return fmt.Errorf("paddle: module attr %s is not base64 text", facts.legacy)
		}
		e.tag(progLegacyCompat, protowire.BytesType)
		e.b = protowire.AppendBytes(e.b, raw)
	}
	if v := attrs.Get(facts.version); v != nil {
		var ver int64
		switch x := v.(type) {
		case ir.Long:
			ver = int64(x)
		case ir.Int:
			ver = int64(x)
		default:
			return fmt.Errorf("paddle: module attr %s is a %s, want long", facts.version, v.Kind())
		}
		s := e.begin(progVersion)
		e.varint(versionVersion, uint64(ver))
		e.end(s)
	}
	if nv, vv := attrs.Get(facts.opVersionNames), attrs.Get(facts.opVersions); nv != nil || vv != nil {
		names, ok1 := nv.(ir.Strings)
		vers, ok2 := vv.(ir.Ints)
		if !ok1 || !ok2 || len(names) != len(vers) {
			return fmt.Errorf("paddle: module attrs %s and %s must be strings and ints of one length", facts.opVersionNames, facts.opVersions)
		}
		s := e.begin(progOpVersionMap)
		for i, n := range names {
			if vers[i] < math.MinInt32 || vers[i] > math.MaxInt32 {
				return fmt.Errorf("paddle: module attr %s: version %d of %s out of int32 range", facts.opVersions, vers[i], n)
			}
			p := e.begin(opVersionMapPair)
			e.str(opVersionPairName, n)
			v := e.begin(opVersionPairVer)
			e.int32(opVersionVersion, int32(vers[i]))
			e.end(v)
			e.end(p)
		}
		e.end(s)
	}
	return nil
}

// moduleAttrs checks m's reserved attrs and notes its own, which no
// ProgramDesc holds.
func (e *encoder) moduleAttrs(m *ir.Module) error {
	for _, a := range m.Attrs {
		switch {
		case mainFacts.has(a.Name):
		case startupFacts.has(a.Name):
			if m.Startup == nil {
				return fmt.Errorf("paddle: module attr %s, but the module has no startup program", a.Name)
			}
		case strings.HasPrefix(a.Name, reservedPrefix):
			return fmt.Errorf("paddle: unknown reserved module attr %s", a.Name)
		default:
			e.sc.note("module attr " + a.Name)
		}
	}
	return nil
}

func (e *encoder) block(p *ir.Program, bi int, b *ir.Block, ids *int64, entries *progSidecar) error {
	s := e.begin(progBlocks)
	e.int32(blockIdx, int32(b.Index))
	e.int32(blockParent, int32(b.Parent))
	where := fmt.Sprintf("%s block %d", p.Name, bi)
	if b.Index != bi || b.Parent < math.MinInt32 || b.Parent > math.MaxInt32 || b.Forward < -1 || b.Forward > math.MaxInt32 {
		return fmt.Errorf("paddle: %s: index %d, parent %d or forward %d out of range", where, b.Index, b.Parent, b.Forward)
	}
	for _, v := range b.Vars() {
		if v == nil {
			return fmt.Errorf("paddle: %s: nil var", where)
		}
		if err := e.varDesc(where, bi, v, entries); err != nil {
			return err
		}
	}
	for pos, op := range b.Ops {
		if op == nil {
			return fmt.Errorf("paddle: %s: nil op at position %d", where, pos)
		}
		if err := e.opDesc(where, bi, pos, op, *ids, entries); err != nil {
			return err
		}
		*ids++
	}
	if b.Forward != -1 {
		e.int32(blockForward, int32(b.Forward))
	}
	e.end(s)
	return nil
}

// sidecarFlags are the var flags VarDesc has no field for.
const sidecarFlags = ir.FlagIsData | ir.FlagNeedClip | ir.FlagTrainable

func (e *encoder) varDesc(where string, bi int, v *ir.Var, entries *progSidecar) error {
	vwhere := fmt.Sprintf("%s var %q", where, v.Name())
	s := e.begin(blockVars)
	e.str(varName, v.Name())
	if err := e.varType(vwhere, v.Type); err != nil {
		return err
	}
	vals := [4]bool{v.Persistable(), v.Has(ir.FlagNeedCheckFeed), v.Kind == ir.KindParam, v.Has(ir.FlagStopGradient)}
	present := defaultVarFields(v)
	if fv := v.Attrs.Get(resVarFields); fv != nil {
		names, ok := fv.(ir.Strings)
		if !ok {
			return fmt.Errorf("paddle: %s: attr %s is a %s, want strings", vwhere, resVarFields, fv.Kind())
		}
		present = [4]bool{}
		for _, n := range names {
			found := false
			for i, f := range varBoolFields {
				if f.name == n {
					present[i], found = true, true
				}
			}
			if !found {
				return fmt.Errorf("paddle: %s: attr %s names no VarDesc field %q", vwhere, resVarFields, n)
			}
		}
	}
	// A field set true is written whatever resVarFields says (a pass may
	// have set it since import); what imports back is the list of those
	// written, when not the usual ones, and a sidecar keeps a list that
	// does not come back.
	var written [4]bool
	for i, f := range varBoolFields {
		if present[i] || vals[i] {
			e.bool(f.num, vals[i])
			written[i] = true
		}
	}
	var fieldsBack ir.Value
	if written != defaultVarFields(v) {
		names := ir.Strings{}
		for i, w := range written {
			if w {
				names = append(names, varBoolFields[i].name)
			}
		}
		fieldsBack = names
	}
	rebuilt := sameValue(v.Attrs.Get(resVarFields), fieldsBack)
	var entry *varEntry
	keep := func() *varEntry {
		if entry == nil {
			entry = &varEntry{Block: bi, Name: v.Name()}
		}
		return entry
	}
	need := func(what string) *varEntry {
		e.sc.note(vwhere + ": " + what)
		return keep()
	}
	if v.Flags&sidecarFlags != 0 {
		need("flags").Flags = v.Flags & sidecarFlags
	}
	if v.Flags&^(sidecarFlags|ir.FlagNeedCheckFeed|ir.FlagStopGradient) != 0 {
		return fmt.Errorf("paddle: %s: unknown flags %#x", vwhere, uint16(v.Flags))
	}
	if v.Dist != nil {
		need("tensor dist").Dist = v.Dist
	}
	var order ir.Value
	for _, a := range v.Attrs {
		switch {
		case a.Name == resAttrOrder:
			order = a.Value
		case a.Name == resVarFields:
		case strings.HasPrefix(a.Name, reservedPrefix):
			return fmt.Errorf("paddle: %s: unknown reserved attr %s", vwhere, a.Name)
		}
	}
	seq, err := writeOrder(v.Attrs, order, false, false)
	if err != nil {
		return fmt.Errorf("paddle: %s: %v", vwhere, err)
	}
	exact := true
	var names ir.Strings
	for _, i := range seq {
		a := v.Attrs[i]
		if !varAttrFits(a.Value) {
			exact = false
			continue
		}
		names = append(names, a.Name)
		as := e.begin(varAttrs)
		e.str(varAttrName, a.Name)
		switch x := a.Value.(type) {
		case ir.Int:
			e.int32(varAttrType, atINT)
			e.int32(varAttrI, int32(x))
		case ir.String:
			e.int32(varAttrType, atSTRING)
			e.str(varAttrS, string(x))
		case ir.Ints:
			e.int32(varAttrType, atINTS)
			for _, y := range x {
				e.int32(varAttrInts, int32(y))
			}
		}
		e.end(as)
	}
	if !slices.IsSorted(names) {
		rebuilt = rebuilt && sameValue(order, names)
	} else {
		rebuilt = rebuilt && order == nil
	}
	switch {
	case !exact:
		need("attrs the VarDesc cannot hold").Attrs = v.Attrs
	case !rebuilt:
		keep().Attrs = v.Attrs // as for an op's stale order
	}
	if entry != nil {
		entries.Vars = append(entries.Vars, entry)
	}
	e.end(s)
	return nil
}

// sameValue reports whether a reserved attr's value (nil: absent) is
// want, a list of names or nil.
func sameValue(have ir.Value, want ir.Value) bool {
	if have == nil || want == nil {
		return have == nil && want == nil
	}
	h, ok1 := have.(ir.Strings)
	w, ok2 := want.(ir.Strings)
	return ok1 && ok2 && slices.Equal(h, w)
}

// varAttrFits reports whether a var attr value is one VarDesc.Attr holds.
func varAttrFits(v ir.Value) bool {
	switch x := v.(type) {
	case ir.Int:
		return fitsInt32(int64(x))
	case ir.String:
		return true
	case ir.Ints:
		for _, y := range x {
			if !fitsInt32(y) {
				return false
			}
		}
		return true
	}
	return false
}

func fitsInt32(x int64) bool { return x >= math.MinInt32 && x <= math.MaxInt32 }

func (e *encoder) varType(where string, t ir.Type) error {
	c, ok := kindCodes[t.Kind]
	if !ok {
		return fmt.Errorf("paddle: %s: type kind %v has no VarType", where, t.Kind)
	}
	s := e.begin(varType)
	e.int32(vtType, c.code)
	switch {
	case t.Kind == ir.DenseTensor:
		if err := e.denseDesc(where, vtDense, t); err != nil {
			return err
		}
	case t.Elems == nil:
	case t.Kind == ir.TensorArray:
		if len(t.Elems) != 1 {
			return fmt.Errorf("paddle: %s: tensor_array with %d elements", where, len(t.Elems))
		}
		if err := e.denseDesc(where, vtArray, t.Elems[0]); err != nil {
			return err
		}
	case t.Kind == ir.Reader:
		r := e.begin(vtReader)
		for _, el := range t.Elems {
			if err := e.denseDesc(where, readerTensors, el); err != nil {
				return err
			}
		}
		e.end(r)
	case t.Kind == ir.Tuple:
		r := e.begin(vtTuple)
		for _, el := range t.Elems {
			var code int64
			switch {
			case el.Kind == ir.DenseTensor && el.DType != ir.DTypeInvalid:
				var ok bool
				if code, ok = el.DType.PaddleCode(); !ok {
					return fmt.Errorf("paddle: %s: tuple element dtype %v", where, el.DType)
				}
			default:
				kc, ok := kindCodes[el.Kind]
				if !ok {
					return fmt.Errorf("paddle: %s: tuple element kind %v", where, el.Kind)
				}
				code = int64(kc.code)
			}
			e.int32(tupleElems, int32(code))
		}
		e.end(r)
	case c.desc != 0:
		if len(t.Elems) != 1 || t.Elems[0].HasLoD {
			return fmt.Errorf("paddle: %s: %v takes one element tensor, without lod", where, t.Kind)
		}
		if err := e.tensorDesc(where, int(c.desc), t.Elems[0]); err != nil {
			return err
		}
	default:
		return fmt.Errorf("paddle: %s: %v has elements", where, t.Kind)
	}
	e.end(s)
	return nil
}

func (e *encoder) denseDesc(where string, num int, t ir.Type) error {
	s := e.begin(num)
	if err := e.tensorDesc(where, dtdTensor, t); err != nil {
		return err
	}
	if t.HasLoD {
		if t.LoD < 0 || t.LoD > math.MaxInt32 {
			return fmt.Errorf("paddle: %s: lod level %d out of range", where, t.LoD)
		}
		e.int32(dtdLoD, int32(t.LoD))
	}
	e.end(s)
	return nil
}

func (e *encoder) tensorDesc(where string, num int, t ir.Type) error {
	if t.Kind != ir.DenseTensor {
		return fmt.Errorf("paddle: %s: element of kind %v where a tensor belongs", where, t.Kind)
	}
	code, ok := t.DType.PaddleCode()
	if !ok {
		return fmt.Errorf("paddle: %s: tensor has dtype %v", where, t.DType)
	}
	s := e.begin(num)
	e.int32(tdDataType, int32(code))
	for _, d := range t.Shape {
		e.varint(tdDims, uint64(d))
	}
	e.end(s)
	return nil
}

func (e *encoder) opDesc(where string, bi, pos int, op *ir.Op, id int64, entries *progSidecar) error {
	owhere := fmt.Sprintf("%s op %d %s", where, op.ID, op.Type)
	s := e.begin(blockOps)
	e.slots(opInputs, op.Inputs)
	e.slots(opOutputs, op.Outputs)
	e.str(opType, op.Type)

	var entry *opEntry
	keep := func() *opEntry {
		if entry == nil {
			entry = &opEntry{Block: bi, Pos: pos}
		}
		return entry
	}
	need := func(what string) *opEntry {
		e.sc.note(owhere + ": " + what)
		return keep()
	}
	if op.ID != id {
		need("op id").ID = &op.ID
	}
	if op.Fwd != 0 {
		need("fwd").Fwd = op.Fwd
	}
	if op.Dist != nil {
		need("op dist").Dist = op.Dist
	}

	var isTarget *bool
	var order ir.Value
	for _, a := range op.Attrs {
		switch a.Name {
		case resAttrOrder:
			order = a.Value
		case resIsTarget:
			x, ok := a.Value.(ir.Bool)
			if !ok {
				return fmt.Errorf("paddle: %s: attr %s must be a bool", owhere, resIsTarget)
			}
			b := bool(x)
			isTarget = &b
		case roleAttr:
			return fmt.Errorf("paddle: %s: an op_role attr besides the op's role", owhere)
		default:
			if strings.HasPrefix(a.Name, reservedPrefix) {
				return fmt.Errorf("paddle: %s: unknown reserved attr %s", owhere, a.Name)
			}
		}
	}
	seq, err := writeOrder(op.Attrs, order, true, op.Role != 0)
	if err != nil {
		return fmt.Errorf("paddle: %s: %v", owhere, err)
	}
	exact := true
	names := make(ir.Strings, 0, len(seq))
	for _, i := range seq {
		if i < 0 {
			e.roleAttr(op.Role)
			names = append(names, roleAttr)
			continue
		}
		ok, err := e.attr(owhere, op.Attrs[i])
		if err != nil {
			return err
		}
		exact = exact && ok
		names = append(names, op.Attrs[i].Name)
	}
	// Import keeps the order written when it is not sorted or has no
	// op_role. An order a pass left stale (a grad op given its forward op's
	// order, say) does not come back as it is; that is no error, being no
	// fact of the program, but a sidecar keeps the exact attrs.
	var orderBack ir.Value
	if !slices.IsSorted(names) || !slices.Contains(names, roleAttr) {
		orderBack = names
	}
	switch {
	case !exact:
		need("attr values the proto rounds").Attrs = op.Attrs
	case !sameValue(order, orderBack):
		keep().Attrs = op.Attrs
	}
	if isTarget != nil {
		e.bool(opIsTarget, *isTarget)
	}
	if entry != nil {
		entries.Ops = append(entries.Ops, entry)
	}
	e.end(s)
	return nil
}

// writeOrder returns the order in which Export writes the attrs of as (an
// op's when op is set, a var's otherwise), as indexes into as, -1 standing
// for the op's op_role attr. Reserved attrs are no attrs of the file. With
// no resAttrOrder (order nil) the order is by name, the IR's, with an op's
// op_role in its place among them. With one, it is the names order lists
// (names as no longer has are skipped, a pass may have dropped them; an
// op's op_role is written where the list has it, and not at all if the list
// lacks it and the role is 0), then the attrs it does not list, by name.
func writeOrder(as ir.Attrs, order ir.Value, op, roleSet bool) ([]int, error) {
	seq := make([]int, 0, len(as)+1)
	listed := make([]bool, len(as))
	role := !op // op_role placed (or not to be written)
	var names ir.Strings
	if order != nil {
		var ok bool
		if names, ok = order.(ir.Strings); !ok {
			return nil, fmt.Errorf("attr %s is a %s, want strings", resAttrOrder, order.Kind())
		}
	}
	for j, name := range names {
		if op && name == roleAttr {
			if role {
				return nil, fmt.Errorf("attr %s lists %s twice", resAttrOrder, name)
			}
			seq, role = append(seq, -1), true
			continue
		}
		if strings.HasPrefix(name, reservedPrefix) {
			return nil, fmt.Errorf("attr %s lists %s, a reserved attr", resAttrOrder, name)
		}
		i, found := slices.BinarySearchFunc(as, name, func(x ir.Attr, name string) int { return strings.Compare(x.Name, name) })
		if !found {
			if slices.Contains(names[:j], name) {
				return nil, fmt.Errorf("attr %s lists %s twice", resAttrOrder, name)
			}
			continue
		}
		if listed[i] {
			return nil, fmt.Errorf("attr %s lists %s twice", resAttrOrder, name)
		}
		listed[i] = true
		seq = append(seq, i)
	}
	if order != nil {
		role = role || !roleSet // a listed order without op_role had none
	}
	// The attrs not listed, by name, op_role among them.
	for i := range as {
		name := as[i].Name
		if listed[i] || strings.HasPrefix(name, reservedPrefix) {
			continue
		}
		if !role && name > roleAttr {
			seq, role = append(seq, -1), true
		}
		seq = append(seq, i)
	}
	if !role {
		seq = append(seq, -1)
	}
	return seq, nil
}

func (e *encoder) roleAttr(r ir.Role) {
	s := e.begin(opAttrs)
	e.str(attrName, "op_role")
	e.int32(attrType, atINT)
	e.int32(attrI, int32(uint32(r)))
	e.end(s)
}

func (e *encoder) slots(num int, ss []ir.Slot) {
	for _, sl := range ss {
		s := e.begin(num)
		e.str(slotName, sl.Name)
		for _, a := range sl.Args {
			e.str(slotArgs, a)
		}
		e.end(s)
	}
}

// attr writes one OpDesc.Attr. It reports false when the proto rounds the
// value (a Float that is not a float32, an Int beyond 32 bits): the exact
// value then goes to the sidecar.
func (e *encoder) attr(where string, a ir.Attr) (bool, error) {
	s := e.begin(opAttrs)
	e.str(attrName, a.Name)
	exact := true
	switch x := a.Value.(type) {
	case ir.Int:
		exact = fitsInt32(int64(x))
		if !exact {
			// An INT cannot hold it: write a LONG, which can.
			e.int32(attrType, atLONG)
			e.varint(attrL, uint64(x))
			break
		}
		e.int32(attrType, atINT)
		e.int32(attrI, int32(x))
	case ir.Float:
		e.int32(attrType, atFLOAT)
		e.fixed32(attrF, f64to32(float64(x)))
		exact = float32Exact(float64(x))
	case ir.String:
		e.int32(attrType, atSTRING)
		e.str(attrS, string(x))
	case ir.Ints:
		for _, y := range x {
			if !fitsInt32(y) {
				exact = false
			}
		}
		if !exact {
			e.int32(attrType, atLONGS)
			for _, y := range x {
				e.varint(attrLongs, uint64(y))
			}
			break
		}
		e.int32(attrType, atINTS)
		for _, y := range x {
			e.int32(attrInts, int32(y))
		}
	case ir.Floats:
		e.int32(attrType, atFLOATS)
		for _, y := range x {
			e.fixed32(attrFloats, f64to32(y))
			exact = exact && float32Exact(y)
		}
	case ir.Strings:
		e.int32(attrType, atSTRINGS)
		for _, y := range x {
			e.str(attrStrings, y)
		}
	case ir.Bool:
		e.int32(attrType, atBOOLEAN)
		e.bool(attrB, bool(x))
	case ir.Bools:
		e.int32(attrType, atBOOLEANS)
		for _, y := range x {
			e.bool(attrBools, y)
		}
	case ir.BlockRef:
		if !fitsInt32(int64(x)) {
			return false, fmt.Errorf("paddle: %s: attr %s: block %d out of range", where, a.Name, x)
		}
		e.int32(attrType, atBLOCK)
		e.int32(attrBlock, int32(x))
	case ir.BlockRefs:
		e.int32(attrType, atBLOCKS)
		for _, y := range x {
			if !fitsInt32(int64(y)) {
				return false, fmt.Errorf("paddle: %s: attr %s: block %d out of range", where, a.Name, y)
			}
			e.int32(attrBlocks, int32(y))
		}
	case ir.Long:
		e.int32(attrType, atLONG)
		e.varint(attrL, uint64(x))
	case ir.Longs:
		e.int32(attrType, atLONGS)
		for _, y := range x {
			e.varint(attrLongs, uint64(y))
		}
	case ir.Float64:
		e.int32(attrType, atFLOAT64)
		e.fixed64(attrFloat64, math.Float64bits(float64(x)))
	case ir.Float64s:
		e.int32(attrType, atFLOAT64S)
		for _, y := range x {
			e.fixed64(attrFloat64s, math.Float64bits(y))
		}
	case ir.VarRef:
		e.int32(attrType, atVAR)
		e.str(attrVar, string(x))
	case ir.VarRefs:
		e.int32(attrType, atVARS)
		for _, y := range x {
			e.str(attrVars, y)
		}
	case ir.Scalar:
		e.int32(attrType, atSCALAR)
		if err := e.scalar(where, a.Name, attrScalar, x); err != nil {
			return false, err
		}
	case ir.Scalars:
		e.int32(attrType, atSCALARS)
		for _, y := range x {
			if err := e.scalar(where, a.Name, attrScalars, y); err != nil {
				return false, err
			}
		}
	default:
		return false, fmt.Errorf("paddle: %s: attr %s has no value", where, a.Name)
	}
	e.end(s)
	return exact, nil
}

func (e *encoder) scalar(where, name string, num int, x ir.Scalar) error {
	if !x.Valid() {
		return fmt.Errorf("paddle: %s: attr %s: invalid scalar", where, name)
	}
	s := e.begin(num)
	e.int32(scalarType, int32(x.Type))
	switch x.Type {
	case ir.ScalarBool:
		e.bool(scalarB, x.B)
	case ir.ScalarLong:
		e.varint(scalarI, uint64(x.I))
	case ir.ScalarFloat64:
		e.fixed64(scalarR, math.Float64bits(x.R))
	case ir.ScalarComplex:
		c := e.begin(scalarC)
		e.fixed64(complexR, math.Float64bits(x.R))
		e.fixed64(complexI, math.Float64bits(x.Im))
		e.end(c)
	}
	e.end(s)
	return nil
}
