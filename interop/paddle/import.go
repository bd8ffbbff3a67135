package paddle

import (
	"encoding/base64"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// The reserved attribute names: facts of the file that the IR has no field
// for, kept so that Export writes the file back byte for byte. Paddle's own
// attribute names never start with "paddle.".
const (
	reservedPrefix = "paddle."

	// Module attrs.
	resVersion        = "paddle.version"           // long: ProgramDesc.version
	resOpVersionNames = "paddle.op_version_names"  // strings: the op-version map's op names, in order
	resOpVersions     = "paddle.op_versions"       // ints: their versions
	resLegacy         = "paddle.op_compatible_map" // string: base64 of the legacy ProgramDesc field 3

	// The same fields of the startup program's ProgramDesc, when it has them.
	resStartupVersion        = "paddle.startup.version"
	resStartupOpVersionNames = "paddle.startup.op_version_names"
	resStartupOpVersions     = "paddle.startup.op_versions"
	resStartupLegacy         = "paddle.startup.op_compatible_map"

	// Op and var attrs.
	resAttrOrder = "paddle.attr_order" // strings: the attrs' names in file order (op_role among an op's), when not the default order

	// Op attrs.
	resIsTarget = "paddle.is_target" // bool: OpDesc.is_target, when the file has it

	// Var attrs.
	resVarFields = "paddle.fields" // strings: the optional VarDesc bools the file writes, when not the usual ones
)

// roleAttr is the name of the attr that holds an op's role in a file.
const roleAttr = "op_role"

// The optional bool fields of VarDesc, in field order, as resVarFields
// names them.
var varBoolFields = [4]struct {
	num  int
	name string
}{
	{varPersistable, "persistable"},
	{varNeedCheckFeed, "need_check_feed"},
	{varIsParameter, "is_parameter"},
	{varStopGradient, "stop_gradient"},
}

// Import decodes a ProgramDesc protobuf file (a .pdmodel or __model__) into
// a module with a main program. name is the file's name: errors start with
// it ("model.pdmodel: BlockDesc 0 > VarDesc "x": ... at byte offset 120"),
// and the module is named after it, without directory or extension. Op ids
// are 1, 2, ... in program order, block by block. Import never panics; the
// module it returns may still fail ir.Verify (a file is free to be wrong),
// but it never nests deeper than ir.MaxBlockDepth.
//
// See the package documentation for where each part of the file lands.
func Import(name string, data []byte) (*ir.Module, error) {
	m, _, err := importNormalised(name, data)
	return m, err
}

// Normalisation is one change the importer made to read what Paddle
// wrote into the IR's rules, none changing what the program computes:
// the file, where in it (as errors name places: `BlockDesc 0 > VarDesc
// "x"`), and what was read as what. A program exported back after a
// normalisation is not the file's bytes, but Paddle loads it.
type Normalisation struct {
	File, Where, What string
}

func (n Normalisation) String() string { return n.File + ": " + n.Where + ": " + n.What }

// importNormalised is Import, with the normalisations it made.
func importNormalised(name string, data []byte) (*ir.Module, []Normalisation, error) {
	d := &decoder{name: name, size: len(data)}
	m, err := d.program(data)
	if err != nil {
		return nil, nil, err
	}
	m.Name = moduleName(name)
	return m, d.norms, nil
}

// note records a normalisation at where.
func (d *decoder) note(where, format string, args ...any) {
	d.norms = append(d.norms, Normalisation{File: d.name, Where: where, What: fmt.Sprintf(format, args...)})
}

// moduleName is a file name without directory and extension.
func moduleName(file string) string {
	if file == "" || file == "-" || strings.HasPrefix(file, "<") {
		return ""
	}
	base := filepath.Base(file)
	if s := strings.TrimSuffix(base, filepath.Ext(base)); s != "" {
		return s
	}
	return base // ".json": the extension is all there is
}

func (d *decoder) program(data []byte) (*ir.Module, error) {
	const msg = "ProgramDesc"
	m := &ir.Module{Main: &ir.Program{Name: "main", Rank: -1}}
	var nextID int64 = 1
	var names ir.Strings
	var versions ir.Ints
	var legacy, version ir.Value
	hasMap := false
	err := d.each(msg, data, 0, func(f *field) error {
		switch f.num {
		case progBlocks:
			if err := d.scalar(msg, "blocks", f, protowire.BytesType); err != nil {
				return err
			}
			return d.block(m.Main, f, &nextID)
		case progLegacyCompat:
			if err := d.scalar(msg, "3 (legacy op_compatible_map)", f, protowire.BytesType); err != nil {
				return err
			}
			if legacy != nil {
				return d.errf(f.off, "%s: field 3 (legacy op_compatible_map) given twice", msg)
			}
			legacy = ir.String(base64.StdEncoding.EncodeToString(f.b))
		case progVersion:
			if err := d.scalar(msg, "version", f, protowire.BytesType); err != nil {
				return err
			}
			if version != nil {
				return d.errf(f.off, "%s: field 4 (version) given twice", msg)
			}
			var v int64
			err := d.each("Version", f.b, f.boff, func(g *field) error {
				if g.num != versionVersion {
					return d.unknown("Version", g)
				}
				if err := d.scalar("Version", "version", g, protowire.VarintType); err != nil {
					return err
				}
				v = int64(g.v)
				return nil
			})
			if err != nil {
				return err
			}
			version = ir.Long(v)
		case progOpVersionMap:
			if err := d.scalar(msg, "op_version_map", f, protowire.BytesType); err != nil {
				return err
			}
			if hasMap {
				return d.errf(f.off, "%s: field 5 (op_version_map) given twice", msg)
			}
			hasMap = true
			names, versions = ir.Strings{}, ir.Ints{}
			return d.each("OpVersionMap", f.b, f.boff, func(g *field) error {
				if g.num != opVersionMapPair {
					return d.unknown("OpVersionMap", g)
				}
				if err := d.scalar("OpVersionMap", "pair", g, protowire.BytesType); err != nil {
					return err
				}
				n, v, err := d.opVersionPair(g)
				names, versions = append(names, n), append(versions, int64(v))
				return err
			})
		default:
			return d.unknown(msg, f)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Export writes these fields in its own order, whatever the file's.
	if legacy != nil {
		m.Attrs.Set(resLegacy, legacy)
	}
	if version != nil {
		m.Attrs.Set(resVersion, version)
	}
	if hasMap {
		m.Attrs.Set(resOpVersionNames, names)
		m.Attrs.Set(resOpVersions, versions)
	}
	if len(m.Main.Blocks) == 0 {
		return nil, &Error{File: d.name, Offset: -1, Msg: "ProgramDesc has no blocks"}
	}
	// A program nested deeper than the IR allows would make every later
	// walk over it slow; it is refused here, as the text parser refuses it.
	if err := ir.CheckNesting(m.Main); err != nil {
		return nil, &Error{File: d.name, Offset: -1, Msg: err.Error()}
	}
	d.dimOutputs(m.Main)
	return m, nil
}

// dimOutputs gives an op's output declared with no dims (Paddle leaves
// a var's dims unset where its inference did not run: an inference
// program's batch_norm SavedMean, dropout's Mask) the shape its op's
// definition infers, when that is not a scalar's.
func (d *decoder) dimOutputs(p *ir.Program) {
	undimmed := func(b *ir.Block, op *ir.Op) bool {
		for n := range op.OutputNames {
			if v := p.LookupVar(b, n); v != nil && v.Type.Kind == ir.DenseTensor && len(v.Type.Shape) == 0 {
				return true
			}
		}
		return false
	}
	for bi, b := range p.Blocks {
		for i, op := range b.Ops {
			if !undimmed(b, op) {
				continue // inference costs what verify does: only where it is needed
			}
			outs, err := ops.InferOp(op, func(n string) *ir.Var { return p.LookupVar(b, n) })
			if err != nil {
				continue // verify names it
			}
			for _, o := range outs {
				args := op.Output(o.Slot)
				if o.Scalar || len(o.Type.Shape) == 0 || o.Index >= len(args) {
					continue
				}
				v := p.LookupVar(b, args[o.Index])
				if v == nil || v.Type.Kind != ir.DenseTensor || len(v.Type.Shape) != 0 {
					continue
				}
				v.Type.Shape = slices.Clone(o.Type.Shape)
				d.note(fmt.Sprintf("BlockDesc %d > OpDesc %d %q", bi, i, op.Type), "output %s %s declared with no dims, read as %s, as the op infers it",
					o.Slot, v.Name(), ir.FormatShape(v.Type.Shape))
			}
		}
	}
}

func (d *decoder) opVersionPair(f *field) (string, int32, error) {
	const msg = "OpVersionPair"
	var name string
	var ver int32
	err := d.each(msg, f.b, f.boff, func(g *field) error {
		var err error
		switch g.num {
		case opVersionPairName:
			name, err = d.str(msg, "op_name", g)
		case opVersionPairVer:
			if err = d.scalar(msg, "op_version", g, protowire.BytesType); err != nil {
				return err
			}
			err = d.each("OpVersion", g.b, g.boff, func(h *field) error {
				if h.num != opVersionVersion {
					return d.unknown("OpVersion", h)
				}
				var err error
				ver, err = d.int32Of("OpVersion", "version", h)
				return err
			})
		default:
			return d.unknown(msg, g)
		}
		return err
	})
	return name, ver, err
}

func (d *decoder) block(p *ir.Program, f *field, nextID *int64) error {
	pos := len(p.Blocks)
	msg := "BlockDesc " + strconv.Itoa(pos)
	b := p.AddBlock(-1)
	b.Parent = 0 // a required field; proto2 reads a missing one as 0
	var opFields []*field
	err := d.each(msg, f.b, f.boff, func(g *field) error {
		switch g.num {
		case blockIdx:
			idx, err := d.int32Of(msg, "idx", g)
			if err != nil {
				return err
			}
			if int(idx) != pos {
				return d.errf(g.off, "%s: idx %d is not the block's position %d", msg, idx, pos)
			}
		case blockParent:
			v, err := d.int32Of(msg, "parent_idx", g)
			b.Parent = int(v)
			return err
		case blockForward:
			v, err := d.int32Of(msg, "forward_block_idx", g)
			if err == nil && v < -1 {
				return d.errf(g.off, "%s: forward_block_idx %d is neither a block's index nor -1", msg, v)
			}
			b.Forward = int(v)
			return err
		case blockVars:
			if err := d.scalar(msg, "vars", g, protowire.BytesType); err != nil {
				return err
			}
			v, err := d.varDesc(msg, g)
			if err != nil {
				return err
			}
			if err := b.AddVar(v); err != nil {
				return d.errf(g.off, "%s: var %q declared twice", msg, v.Name())
			}
		case blockOps:
			if err := d.scalar(msg, "ops", g, protowire.BytesType); err != nil {
				return err
			}
			c := *g
			opFields = append(opFields, &c)
		default:
			return d.unknown(msg, g)
		}
		return nil
	})
	if err != nil {
		if n := len(opFields); d.cut != nil && n > 0 && opFields[n-1].cut {
			return d.within(d.cut, func() { _, _ = d.opDesc(fmt.Sprintf("%s > OpDesc %d", msg, n-1), opFields[n-1]) })
		}
		return err
	}
	// A missing idx is taken as the position.
	b.Ops = make([]*ir.Op, 0, len(opFields))
	for i, g := range opFields {
		op, err := d.opDesc(fmt.Sprintf("%s > OpDesc %d", msg, i), g)
		if err != nil {
			return err
		}
		op.ID = *nextID
		*nextID++
		b.Ops = append(b.Ops, op)
	}
	return nil
}

func (d *decoder) varDesc(outer string, f *field) (*ir.Var, error) {
	msg := outer + " > VarDesc"
	v := &ir.Var{}
	var name string
	var vals, present [4]bool
	var attrs ir.Attrs
	var order fileOrder
	hasType := false
	err := d.each(msg, f.b, f.boff, func(g *field) error {
		switch g.num {
		case varName:
			s, err := d.str(msg, "name", g)
			name = s
			msg = fmt.Sprintf("%s > VarDesc %q", outer, s)
			return err
		case varType:
			if err := d.scalar(msg, "type", g, protowire.BytesType); err != nil {
				return err
			}
			t, err := d.varType(msg, g)
			v.Type, hasType = t, true
			return err
		case varPersistable, varNeedCheckFeed, varIsParameter, varStopGradient:
			i := int(g.num) - varPersistable
			if err := d.scalar(msg, varBoolFields[i].name, g, protowire.VarintType); err != nil {
				return err
			}
			present[i], vals[i] = true, g.v != 0
		case varAttrs:
			if err := d.scalar(msg, "attrs", g, protowire.BytesType); err != nil {
				return err
			}
			a, err := d.varAttr(msg, g)
			if err != nil {
				return err
			}
			if !addAttr(&attrs, a) {
				return d.errf(g.off, "%s: attr %q given twice", msg, a.Name)
			}
			order.add(a.Name)
		default:
			return d.unknown(msg, g)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !hasType {
		return nil, d.errf(f.off, "%s: no type", msg)
	}
	if v.Type.IsTensor() && slices.ContainsFunc(v.Type.Shape, func(n int64) bool { return n < -1 }) {
		// Paddle's shape inference multiplies an unknown batch (-1) by
		// a known size (layer_norm's Mean of [-1, 50] is [-50]): a dim
		// it does not know.
		was := ir.FormatShape(v.Type.Shape)
		for i, n := range v.Type.Shape {
			if n < -1 {
				v.Type.Shape[i] = -1
			}
		}
		d.note(msg, "dims %s read as %s: a dim below -1 is a multiple of an unknown one", was, ir.FormatShape(v.Type.Shape))
	}
	switch persist, param := vals[0], vals[2]; {
	case param && !persist:
		return nil, d.errf(f.off, "%s: is_parameter is set but persistable is not (the IR has no such var)", msg)
	case param:
		v.Kind = ir.KindParam
	case persist:
		v.Kind = ir.KindPersist
	}
	if vals[1] {
		v.Flags |= ir.FlagNeedCheckFeed
	}
	if vals[3] {
		v.Flags |= ir.FlagStopGradient
	}
	if want := defaultVarFields(v); present != want {
		var names ir.Strings = []string{}
		for i, p := range present {
			if p {
				names = append(names, varBoolFields[i].name)
			}
		}
		attrs.Set(resVarFields, names)
	}
	if order.unsorted {
		attrs.Set(resAttrOrder, order.names)
	}
	v.Attrs = attrs
	*v = v.Named(name)
	return v, nil
}

// addAttr inserts a in as, which is sorted by name, at its place; it
// reports false, leaving as alone, when as already has a's name.
func addAttr(as *ir.Attrs, a ir.Attr) bool {
	i, found := slices.BinarySearchFunc(*as, a.Name, func(x ir.Attr, name string) int { return strings.Compare(x.Name, name) })
	if found {
		return false
	}
	if i == len(*as) {
		*as = append(*as, a) // files mostly come sorted
	} else {
		*as = slices.Insert(*as, i, a)
	}
	return true
}

// fileOrder collects attr names in the order a file gives them, and
// whether that order is sorted by name (the IR's order, and so the one
// Export writes unless a resAttrOrder says otherwise).
type fileOrder struct {
	names    ir.Strings
	unsorted bool
}

func (o *fileOrder) add(name string) {
	if n := len(o.names); n > 0 && o.names[n-1] >= name {
		o.unsorted = true
	}
	o.names = append(o.names, name)
}

// defaultVarFields says which optional VarDesc bools Export writes for v
// unless its resVarFields says otherwise: persistable always (Paddle sets
// it on every var), the others when true.
func defaultVarFields(v *ir.Var) [4]bool {
	return [4]bool{true, v.Has(ir.FlagNeedCheckFeed), v.Kind == ir.KindParam, v.Has(ir.FlagStopGradient)}
}

func (d *decoder) varAttr(outer string, f *field) (ir.Attr, error) {
	msg := outer + " > Attr"
	var a ir.Attr
	var typ int32
	var i int32
	var s string
	var ints []int32
	var set [6]bool
	err := d.each(msg, f.b, f.boff, func(g *field) error {
		var err error
		switch g.num {
		case varAttrName:
			a.Name, err = d.str(msg, "name", g)
			msg = fmt.Sprintf("%s > Attr %q", outer, a.Name)
		case varAttrType:
			typ, err = d.int32Of(msg, "type", g)
		case varAttrI:
			i, err = d.int32Of(msg, "i", g)
		case varAttrS:
			s, err = d.str(msg, "s", g)
		case varAttrInts:
			err = d.int32s(msg, "ints", g, &ints)
		default:
			return d.unknown(msg, g)
		}
		set[g.num] = true
		return err
	})
	if err != nil {
		return a, err
	}
	if strings.HasPrefix(a.Name, reservedPrefix) {
		return a, d.errf(f.off, "%s: the name prefix %q is reserved", msg, reservedPrefix)
	}
	var vf int
	switch typ {
	case atINT:
		vf = varAttrI
	case atSTRING:
		vf = varAttrS
	case atINTS:
		vf = varAttrInts
	default:
		return a, d.errf(f.off, "%s: type %s is not one a var attr holds (INT, STRING, INTS)", msg, attrTypeName(typ))
	}
	for _, n := range []int{varAttrI, varAttrS, varAttrInts} {
		if set[n] && n != vf {
			return a, d.errf(f.off, "%s: field %d set on a %s attr", msg, n, attrTypeName(typ))
		}
	}
	switch typ {
	case atINT:
		a.Value = ir.Int(i)
	case atSTRING:
		a.Value = ir.String(s)
	default:
		xs := make(ir.Ints, len(ints))
		for j, x := range ints {
			xs[j] = int64(x)
		}
		a.Value = xs
	}
	return a, nil
}

func (d *decoder) varType(outer string, f *field) (ir.Type, error) {
	msg := outer + " > VarType"
	var code int32
	var desc *field
	var descNum int32
	err := d.each(msg, f.b, f.boff, func(g *field) error {
		switch n := int32(g.num); {
		case n == vtType:
			var err error
			code, err = d.int32Of(msg, "type", g)
			return err
		case descFieldNames[n] != "":
			if err := d.scalar(msg, descFieldNames[n], g, protowire.BytesType); err != nil {
				return err
			}
			if desc != nil {
				return d.errf(g.off, "%s: two descriptions, fields %s and %s", msg, descFieldNames[descNum], descFieldNames[n])
			}
			c := *g
			desc, descNum = &c, n
		default:
			return d.unknown(msg, g)
		}
		return nil
	})
	if err != nil {
		if k, ok := codeKinds[code]; ok && d.cut != nil && desc != nil && desc.cut {
			return ir.Type{}, d.within(d.cut, func() { _, _ = d.typeDesc(msg, k, desc, descNum) })
		}
		return ir.Type{}, err
	}
	k, ok := codeKinds[code]
	if !ok {
		return ir.Type{}, d.errf(f.off, "%s: type %s is not a var kind the IR knows", msg, varTypeName(code))
	}
	want := kindCodes[k].desc
	if desc != nil && descNum != want {
		return ir.Type{}, d.errf(desc.off, "%s: field %s set on a %s var", msg, descFieldNames[descNum], varTypeName(code))
	}
	if desc == nil {
		if k == ir.DenseTensor {
			return ir.Type{}, d.errf(f.off, "%s: DENSE_TENSOR without dense_tensor", msg)
		}
		return ir.NoShape(k), nil
	}
	return d.typeDesc(msg, k, desc, descNum)
}

// typeDesc reads the desc of a VarType of kind k, field descNum.
func (d *decoder) typeDesc(msg string, k ir.TypeKind, desc *field, descNum int32) (ir.Type, error) {
	dmsg := msg + " > " + descFieldNames[descNum]
	switch k {
	case ir.DenseTensor:
		return d.denseDesc(dmsg, desc)
	case ir.TensorArray:
		e, err := d.denseDesc(dmsg, desc)
		return ir.Type{Kind: k, Elems: []ir.Type{e}}, err
	case ir.Reader:
		t := ir.Type{Kind: k, Elems: []ir.Type{}}
		err := d.each(dmsg, desc.b, desc.boff, func(g *field) error {
			if g.num != readerTensors {
				return d.unknown(dmsg, g)
			}
			if err := d.scalar(dmsg, "dense_tensor", g, protowire.BytesType); err != nil {
				return err
			}
			e, err := d.denseDesc(dmsg+" > DenseTensorDesc", g)
			t.Elems = append(t.Elems, e)
			return err
		})
		return t, err
	case ir.Tuple:
		t := ir.Type{Kind: k, Elems: []ir.Type{}}
		err := d.each(dmsg, desc.b, desc.boff, func(g *field) error {
			if g.num != tupleElems {
				return d.unknown(dmsg, g)
			}
			return d.repeated(dmsg, "element_type", g, protowire.VarintType, func(v uint64) error {
				c := int32(v)
				if int64(v) != int64(c) {
					return d.errf(g.off, "%s: element_type %d out of range", dmsg, int64(v))
				}
				if dt, ok := ir.DTypeFromPaddle(int64(c)); ok {
					t.Elems = append(t.Elems, ir.Type{Kind: ir.DenseTensor, DType: dt})
					return nil
				}
				if ek, ok := codeKinds[c]; ok {
					t.Elems = append(t.Elems, ir.Type{Kind: ek})
					return nil
				}
				return d.errf(g.off, "%s: element_type %s is not a dtype or var kind the IR knows", dmsg, varTypeName(c))
			})
		})
		return t, err
	default:
		e, err := d.tensorDesc(dmsg, desc)
		return ir.Type{Kind: k, Elems: []ir.Type{e}}, err
	}
}

// denseDesc reads a DenseTensorDesc (LoDTensorDesc): a TensorDesc and a
// lod level.
func (d *decoder) denseDesc(msg string, f *field) (ir.Type, error) {
	t := ir.Type{Kind: ir.DenseTensor, DType: ir.Boolean, Shape: []int64{}} // BOOL (0) when the TensorDesc is missing
	err := d.each(msg, f.b, f.boff, func(g *field) error {
		switch g.num {
		case dtdTensor:
			if err := d.scalar(msg, "tensor", g, protowire.BytesType); err != nil {
				return err
			}
			td, err := d.tensorDesc(msg+" > TensorDesc", g)
			t.DType, t.Shape = td.DType, td.Shape
			return err
		case dtdLoD:
			v, err := d.int32Of(msg, "lod_level", g)
			if err == nil && v < 0 {
				err = d.errf(g.off, "%s: negative lod_level %d", msg, v)
			}
			t.LoD, t.HasLoD = int(v), true
			return err
		}
		return d.unknown(msg, g)
	})
	return t, err
}

// tensorDesc reads a TensorDesc: a dtype and dims.
func (d *decoder) tensorDesc(msg string, f *field) (ir.Type, error) {
	t := ir.Type{Kind: ir.DenseTensor, DType: ir.Boolean, Shape: []int64{}} // data_type is required; proto2 reads a missing enum as its first value, BOOL
	err := d.each(msg, f.b, f.boff, func(g *field) error {
		switch g.num {
		case tdDataType:
			c, err := d.int32Of(msg, "data_type", g)
			if err != nil {
				return err
			}
			dt, ok := ir.DTypeFromPaddle(int64(c))
			if !ok {
				return d.errf(g.off, "%s: data_type %s is not a dtype the IR knows", msg, varTypeName(c))
			}
			t.DType = dt
		case tdDims:
			return d.repeated(msg, "dims", g, protowire.VarintType, func(v uint64) error {
				t.Shape = append(t.Shape, int64(v))
				return nil
			})
		default:
			return d.unknown(msg, g)
		}
		return nil
	})
	return t, err
}

var opFieldNames = map[protowire.Number]string{opInputs: "inputs", opOutputs: "outputs", opAttrs: "attrs"}

// rawOp is an OpDesc's fields, gathered before the op is built: its type,
// which names the op in messages, comes after its slots.
type rawOp struct {
	typ      string
	inputs   []*field
	outputs  []*field
	attrs    []*field
	isTarget *bool
}

func (d *decoder) opDesc(outer string, f *field) (*ir.Op, error) {
	var r rawOp
	err := d.each(outer, f.b, f.boff, func(g *field) error {
		switch g.num {
		case opInputs, opOutputs, opAttrs:
			if g.typ != protowire.BytesType {
				return d.wrongType(outer, opFieldNames[g.num], g, protowire.BytesType)
			}
			c := *g
			switch g.num {
			case opInputs:
				r.inputs = append(r.inputs, &c)
			case opOutputs:
				r.outputs = append(r.outputs, &c)
			default:
				r.attrs = append(r.attrs, &c)
			}
		case opType:
			s, err := d.str(outer, "type", g)
			r.typ = s
			return err
		case opIsTarget:
			if err := d.scalar(outer, "is_target", g, protowire.VarintType); err != nil {
				return err
			}
			b := g.v != 0
			r.isTarget = &b
		default:
			return d.unknown(outer, g)
		}
		return nil
	})
	msg := fmt.Sprintf("%s %q", outer, r.typ)
	if err != nil {
		// The file ends in a slot or an attr: find where in it.
		if d.cut == nil {
			return nil, err
		}
		if r.typ == "" {
			msg = outer
		}
		lastCut := func(fs []*field) bool { return len(fs) > 0 && fs[len(fs)-1].cut }
		return nil, d.within(d.cut, func() {
			switch {
			case lastCut(r.inputs):
				_, _ = d.slots(msg, "inputs", r.inputs)
			case lastCut(r.outputs):
				_, _ = d.slots(msg, "outputs", r.outputs)
			case lastCut(r.attrs):
				_, _ = d.opAttr(msg, r.attrs[len(r.attrs)-1])
			}
		})
	}
	op := &ir.Op{Type: r.typ}
	if op.Inputs, err = d.slots(msg, "inputs", r.inputs); err != nil {
		return nil, err
	}
	if op.Outputs, err = d.slots(msg, "outputs", r.outputs); err != nil {
		return nil, err
	}
	if def := ops.Lookup(op.Type); def != nil {
		op.Inputs = d.dropEmptySlots(msg, op.Type, "input", op.Inputs, def.Inputs)
		op.Outputs = d.dropEmptySlots(msg, op.Type, "output", op.Outputs, def.Outputs)
	}
	op.Attrs = make(ir.Attrs, 0, len(r.attrs)+1)
	order := fileOrder{names: make(ir.Strings, 0, len(r.attrs))}
	hasRole := false
	for _, g := range r.attrs {
		a, err := d.opAttr(msg, g)
		if err != nil {
			return nil, err
		}
		if a.Name == roleAttr {
			if hasRole {
				return nil, d.errf(g.off, "%s: attr %q given twice", msg, a.Name)
			}
			v, ok := a.Value.(ir.Int)
			if !ok {
				return nil, d.errf(g.off, "%s: attr op_role is a %s, want INT", msg, a.Value.Kind())
			}
			op.Role = ir.Role(uint32(int32(v)))
			hasRole = true
		} else if !addAttr(&op.Attrs, a) {
			return nil, d.errf(g.off, "%s: attr %q given twice", msg, a.Name)
		}
		order.add(a.Name)
	}
	// Export writes op_role among the attrs by name unless told otherwise:
	// the order to keep is one that is not sorted or has no op_role.
	if order.unsorted || !hasRole {
		op.Attrs.Set(resAttrOrder, order.names)
	}
	if r.isTarget != nil {
		op.Attrs.Set(resIsTarget, ir.Bool(*r.isTarget))
	}
	if len(op.Attrs) == 0 {
		op.Attrs = nil
	}
	return op, nil
}

// dropEmptySlots drops the slots of an op that name no arg and that
// its type's definition does not have (a BiasTensor of scale another
// Paddle version declares): Paddle passes nothing through them, and the
// IR's ops have only their definition's slots.
func (d *decoder) dropEmptySlots(msg, typ, side string, slots []ir.Slot, known []ops.Slot) []ir.Slot {
	kept := slots[:0]
	for _, s := range slots {
		if len(s.Args) == 0 && !slices.ContainsFunc(known, func(k ops.Slot) bool {
			return k.Name == s.Name || k.Numbered && strings.HasPrefix(s.Name, k.Name)
		}) {
			d.note(msg, "empty %s slot %s dropped: %s has no such slot", side, s.Name, typ)
			continue
		}
		kept = append(kept, s)
	}
	if len(kept) == 0 {
		return nil
	}
	return kept
}

func (d *decoder) slots(msg, what string, fs []*field) ([]ir.Slot, error) {
	if len(fs) == 0 {
		return nil, nil
	}
	out := make([]ir.Slot, len(fs))
	for i, f := range fs {
		smsg := fmt.Sprintf("%s > %s[%d]", msg, what, i)
		s := &out[i]
		s.Args = []string{}
		err := d.each(smsg, f.b, f.boff, func(g *field) error {
			switch g.num {
			case slotName:
				var err error
				s.Name, err = d.str(smsg, "parameter", g)
				return err
			case slotArgs:
				a, err := d.str(smsg, "arguments", g)
				s.Args = append(s.Args, a)
				return err
			}
			return d.unknown(smsg, g)
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// rawAttr gathers an OpDesc.Attr's fields.
type rawAttr struct {
	name    string
	typ     int32
	set     uint32 // bit n: field n was present
	i       int32
	f       uint32
	s       string
	ints    []int32
	floats  []uint32
	strs    []string
	b       bool
	bools   []bool
	block   int32
	l       int64
	blocks  []int32
	longs   []int64
	f64s    []float64
	varName string
	vars    []string
	f64     float64
	scalar  ir.Scalar
	scalars []ir.Scalar
}

func (d *decoder) opAttr(outer string, f *field) (ir.Attr, error) {
	msg := outer + " > Attr"
	var r rawAttr
	err := d.each(msg, f.b, f.boff, func(g *field) error {
		var err error
		fname := attrFieldNames[int(g.num)]
		switch g.num {
		case attrName:
			r.name, err = d.str(msg, fname, g)
			msg = fmt.Sprintf("%s > Attr %q", outer, r.name)
		case attrType:
			r.typ, err = d.int32Of(msg, fname, g)
		case attrI:
			r.i, err = d.int32Of(msg, fname, g)
		case attrF:
			if err = d.scalar(msg, fname, g, protowire.Fixed32Type); err == nil {
				r.f = uint32(g.v)
			}
		case attrS:
			r.s, err = d.str(msg, fname, g)
		case attrInts:
			err = d.int32s(msg, fname, g, &r.ints)
		case attrFloats:
			err = d.repeated(msg, fname, g, protowire.Fixed32Type, func(v uint64) error {
				r.floats = append(r.floats, uint32(v))
				return nil
			})
		case attrStrings:
			var s string
			s, err = d.str(msg, fname, g)
			r.strs = append(r.strs, s)
		case attrB:
			if err = d.scalar(msg, fname, g, protowire.VarintType); err == nil {
				r.b = g.v != 0
			}
		case attrBools:
			err = d.repeated(msg, fname, g, protowire.VarintType, func(v uint64) error {
				r.bools = append(r.bools, v != 0)
				return nil
			})
		case attrBlock:
			r.block, err = d.int32Of(msg, fname, g)
		case attrL:
			if err = d.scalar(msg, fname, g, protowire.VarintType); err == nil {
				r.l = int64(g.v)
			}
		case attrBlocks:
			err = d.int32s(msg, fname, g, &r.blocks)
		case attrLongs:
			err = d.repeated(msg, fname, g, protowire.VarintType, func(v uint64) error {
				r.longs = append(r.longs, int64(v))
				return nil
			})
		case attrFloat64s:
			err = d.repeated(msg, fname, g, protowire.Fixed64Type, func(v uint64) error {
				r.f64s = append(r.f64s, math.Float64frombits(v))
				return nil
			})
		case attrVar:
			r.varName, err = d.str(msg, fname, g)
		case attrVars:
			var s string
			s, err = d.str(msg, fname, g)
			r.vars = append(r.vars, s)
		case attrFloat64:
			if err = d.scalar(msg, fname, g, protowire.Fixed64Type); err == nil {
				r.f64 = math.Float64frombits(g.v)
			}
		case attrScalar:
			if err = d.scalar(msg, fname, g, protowire.BytesType); err == nil {
				r.scalar, err = d.scalarMsg(msg+" > scalar", g)
			}
		case attrScalars:
			var s ir.Scalar
			if err = d.scalar(msg, fname, g, protowire.BytesType); err == nil {
				s, err = d.scalarMsg(msg+" > scalars", g)
				r.scalars = append(r.scalars, s)
			}
		default:
			return d.unknown(msg, g)
		}
		r.set |= 1 << g.num
		return err
	})
	if err != nil {
		return ir.Attr{}, err
	}
	if strings.HasPrefix(r.name, reservedPrefix) {
		return ir.Attr{}, d.errf(f.off, "%s: the name prefix %q is reserved", msg, reservedPrefix)
	}
	if r.typ < 0 || r.typ >= numAttrTypes {
		return ir.Attr{}, d.errf(f.off, "%s: unknown AttrType %d", msg, r.typ)
	}
	vf := attrValueField[r.typ]
	if extra := r.set &^ (1<<attrName | 1<<attrType | 1<<vf); extra != 0 {
		n := 0
		for extra&(1<<n) == 0 {
			n++
		}
		return ir.Attr{}, d.errf(f.off, "%s: field %d (%s) set on %s %s attr", msg, n, attrFieldNames[n], article(attrTypeName(r.typ)), attrTypeName(r.typ))
	}
	a := ir.Attr{Name: r.name}
	switch r.typ {
	case atINT:
		a.Value = ir.Int(r.i)
	case atFLOAT:
		a.Value = ir.Float(f32to64(r.f))
	case atSTRING:
		a.Value = ir.String(r.s)
	case atINTS:
		a.Value = convert[ir.Ints](r.ints, func(x int32) int64 { return int64(x) })
	case atFLOATS:
		a.Value = convert[ir.Floats](r.floats, f32to64)
	case atSTRINGS:
		a.Value = orEmpty[ir.Strings](r.strs)
	case atBOOLEAN:
		a.Value = ir.Bool(r.b)
	case atBOOLEANS:
		a.Value = orEmpty[ir.Bools](r.bools)
	case atBLOCK:
		a.Value = ir.BlockRef(r.block)
	case atLONG:
		a.Value = ir.Long(r.l)
	case atBLOCKS:
		a.Value = convert[ir.BlockRefs](r.blocks, func(x int32) int { return int(x) })
	case atLONGS:
		a.Value = orEmpty[ir.Longs](r.longs)
	case atFLOAT64S:
		a.Value = orEmpty[ir.Float64s](r.f64s)
	case atVAR:
		a.Value = ir.VarRef(r.varName)
	case atVARS:
		a.Value = orEmpty[ir.VarRefs](r.vars)
	case atFLOAT64:
		a.Value = ir.Float64(r.f64)
	case atSCALAR:
		if r.set&(1<<attrScalar) == 0 {
			r.scalar = ir.BoolScalar(false) // a missing Scalar reads as its defaults
		}
		a.Value = r.scalar
	case atSCALARS:
		a.Value = orEmpty[ir.Scalars](r.scalars)
	}
	return a, nil
}

// article is "a" or "an" before an AttrType name.
func article(name string) string {
	if name != "" && strings.ContainsRune("AEIOU", rune(name[0])) {
		return "an"
	}
	return "a"
}

// orEmpty returns xs as a list value, empty rather than nil.
// convert returns the list of f of each of xs (empty, not nil, for none).
func convert[L ~[]E, E, X any](xs []X, f func(X) E) L {
	out := make(L, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func orEmpty[L ~[]E, E any](xs []E) L {
	if xs == nil {
		return L{}
	}
	return L(xs)
}

// scalarMsg reads a Scalar message.
func (d *decoder) scalarMsg(msg string, f *field) (ir.Scalar, error) {
	s := ir.Scalar{Type: ir.ScalarBool} // type is required; proto2 reads a missing enum as its first value, BOOLEAN
	var set uint32
	err := d.each(msg, f.b, f.boff, func(g *field) error {
		set |= 1 << g.num
		switch g.num {
		case scalarType:
			t, err := d.int32Of(msg, "type", g)
			if err != nil {
				return err
			}
			if t < int32(ir.ScalarBool) || t > int32(ir.ScalarComplex) {
				return d.errf(g.off, "%s: unknown Scalar.Type %d", msg, t)
			}
			s.Type = ir.ScalarKind(t)
		case scalarB:
			if err := d.scalar(msg, "b", g, protowire.VarintType); err != nil {
				return err
			}
			s.B = g.v != 0
		case scalarI:
			if err := d.scalar(msg, "i", g, protowire.VarintType); err != nil {
				return err
			}
			s.I = int64(g.v)
		case scalarR:
			if err := d.scalar(msg, "r", g, protowire.Fixed64Type); err != nil {
				return err
			}
			s.R = math.Float64frombits(g.v)
		case scalarC:
			if err := d.scalar(msg, "c", g, protowire.BytesType); err != nil {
				return err
			}
			return d.each(msg+" > c", g.b, g.boff, func(h *field) error {
				if h.num != complexR && h.num != complexI {
					return d.unknown(msg+" > c", h)
				}
				if err := d.scalar(msg+" > c", "r/i", h, protowire.Fixed64Type); err != nil {
					return err
				}
				if h.num == complexR {
					s.R = math.Float64frombits(h.v)
				} else {
					s.Im = math.Float64frombits(h.v)
				}
				return nil
			})
		default:
			return d.unknown(msg, g)
		}
		return nil
	})
	if err != nil {
		return s, err
	}
	own := uint32(1) << [...]int{ir.ScalarBool: scalarB, ir.ScalarLong: scalarI, ir.ScalarFloat64: scalarR, ir.ScalarComplex: scalarC}[s.Type]
	if extra := set &^ (1<<scalarType | own); extra != 0 {
		n := 0
		for extra&(1<<n) == 0 {
			n++
		}
		return s, d.errf(f.off, "%s: field %d set on a Scalar of type %d", msg, n, s.Type)
	}
	return s, nil
}
