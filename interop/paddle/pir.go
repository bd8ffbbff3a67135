package paddle

// PIR programs: Paddle 3's JSON serialization of a program (files with
// base_code.magic "pir", usually named *.json next to a .pdiparams).
//
// ImportPIR maps a PIR program onto the IR as follows.
//
//   - The module op's one region with its one block becomes block 0 of
//     the main program. Every block of a region of an op becomes a further
//     block, whose Parent is the block holding the op; an op's blocks are
//     numbered together, in region order, when the op is reached, and
//     filled depth first. Op ids are 1, 2, ... in program order (an op
//     before the ops of its regions).
//   - Values become vars declared in the block that defines them: an op
//     result %N is v<N>, a block argument -N is arg<N>, a keyword block
//     argument is named by its key, a pd_op.data result by the op's name
//     attr and a parameter by its parameter_name. A name already taken in
//     the program gets the first free suffix _1, _2, ... Var names are thus
//     unique in the program, and an operand must name a value defined
//     earlier in its own block or an enclosing one.
//   - A builtin.t_dtensor of a bool, int, uint8 or float element type (not
//     complex, index or fp8) and dims of -1 or more becomes a dense tensor
//     of that dtype and shape; -1 dims are kept. A
//     pd_op.t_dense_tensor_array becomes a tensor_array var, a
//     dist.t_dist_dtensor the dense tensor of its global type; any other
//     type (t_vec, t_selected_rows, sparse tensors, bare element types,
//     cf types, NULL, and dense tensors the IR cannot hold) becomes a raw
//     var. Each of these non-plain vars keeps its PIR type as compact JSON
//     in the var attr pir_type.
//   - An op becomes an op of type dialect.name (dialect ids 0 builtin,
//     1 pd_op, 2 cf, 3 custom_op, 4 dist). Operands are the input slots
//     in0, in1, ... and results the output slots out0, out1, ..., one arg
//     each; a null operand or result (%0) keeps its slot, empty.
//   - Attrs: a_bool is a Bool; a_i32, a_i64 and a_index an Int; a_f32 and
//     a_f64 a Float (NaN, INF, -INF from "VD"); a_str, a_tensorname,
//     a_dtype and a_layout a String; an a_array of one of those kinds the
//     list of that kind (an empty one Ints, as the text format reads []);
//     a_intarray Ints; a_place ([type, device id, device type]) the Strings
//     of its three parts. Any other attr (a_scalar, a_type, complex, dist
//     attrs such as op_dist_attr, arrays of mixed or nested values, values
//     out of range) is kept as a String holding its JSON ({"#":...,"D":...}).
//     An integer op_role that is a valid role becomes the op's Role and
//     leaves the attrs.
//   - A parameter op (compressed "p", or builtin.parameter written out)
//     becomes a builtin.parameter op with attr parameter_name (and its
//     dist and quant attrs, DA and QA) and no output slot, and its value a
//     param var (a persist var when is_parameter is 0) flagged need_clip,
//     stop_gradient and trainable as the op says, with var attr
//     is_distributed = true when set. The op has no output because the IR
//     lets only optimize or lrsched ops write a persistable; the var is
//     declared, as in a ProgramDesc block.
//   - pd_op.if gets attr sub_blocks (BlockRefs of its two regions' blocks),
//     its condition being in0; pd_op.while gets sub_block (its body); any
//     other op with regions gets sub_blocks listing all its regions' blocks.
//     Block arguments (a while body's loop vars) are vars of the sub-block
//     that no op defines, which the IR allows; which cf.yield operand feeds
//     which result of the op stays positional, as in PIR.
//
// What is lost:
//
//   - Slot names: PIR operands and results are positional, and naming them
//     (X, Y, Out) needs Paddle's op signature tables, which the file does
//     not carry.
//   - Types: the layout, LoD and offset of dense tensors; the dtype and
//     shape of raw and tensor_array vars, and the dist attribute and local
//     dims of dist tensors (all only in the pir_type JSON; a dist tensor
//     gets no ir.TensorDist and the module no meshes).
//   - Attrs kept as JSON strings (see above) are opaque to passes; an
//     attr named sub_block or sub_blocks on an op with regions is replaced.
//   - Result attrs (OA): stop_gradient becomes the var flag; persistable
//     of an op result (fetch's) is dropped, as the IR would reject a
//     forward op writing a persistable var, and so is a parameter's (its
//     var is persistable anyway). A file saved with trainable false has no
//     OA, so its vars get neither stop_gradient nor trainable.
//   - base_code.trainable and base_code.version (no version patch is
//     applied: the program is read as written), the region and block ids
//     ("region_0", "block_1"), the region boundaries of an op whose regions
//     hold several blocks, and the value ids themselves. Keyword block
//     arguments that repeat positional ones (Paddle writes the positional
//     list under "kwargs") are read once.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/distpass/distpass/ir"
)

// IsPIR reports whether data is a PIR program: a JSON object whose
// base_code.magic is "pir".
func IsPIR(data []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return false
	}
	var base map[string]json.RawMessage
	if json.Unmarshal(top["base_code"], &base) != nil {
		return false
	}
	var magic string
	return json.Unmarshal(base["magic"], &magic) == nil && magic == "pir"
}

// ImportPIR reads a PIR JSON program into a module whose main program
// holds it, as the comment at the top of pir.go describes. name is the
// file name: errors start with it, and the module is named after it
// without its directory and extension. Errors name the JSON path of what
// is wrong, such as program.regions[0].blocks[0].ops[3].I[1]. The module
// returned passes ir.Verify.
func ImportPIR(name string, data []byte) (*ir.Module, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("%s: bad JSON: %v", name, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: bad JSON: data after the top-level value", name)
	}
	r := &pirReader{
		file:  name,
		prog:  &ir.Program{Name: "main", Rank: -1},
		names: map[string]bool{},
		vals:  map[int64]pirValue{},
	}
	if err := r.module(root); err != nil {
		return nil, err
	}
	m := &ir.Module{Name: moduleName(name), Main: r.prog}
	if err := ir.Verify(m); err != nil {
		return nil, fmt.Errorf("%s: the imported module does not verify:\n%w", name, err)
	}
	return m, nil
}

// pirDialects maps PIR's dialect ids to dialect names.
var pirDialects = map[string]string{"0": "builtin", "1": "pd_op", "2": "cf", "3": "custom_op", "4": "dist"}

// pirDTypes maps builtin element type names to dtypes.
var pirDTypes = map[string]ir.DType{
	"t_bool": ir.Boolean, "t_ui8": ir.U8, "t_i8": ir.I8, "t_i16": ir.I16, "t_i32": ir.I32, "t_i64": ir.I64,
	"t_f16": ir.F16, "t_bf16": ir.BF16, "t_f32": ir.F32, "t_f64": ir.F64,
}

type pirReader struct {
	file   string
	prog   *ir.Program
	lastID int64
	names  map[string]bool    // var names taken in the program
	vals   map[int64]pirValue // value id -> var
}

// pirValue is a value read so far: its var and the block declaring it.
type pirValue struct {
	v     *ir.Var
	block int
}

func (r *pirReader) errorf(path, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if path == "" {
		return fmt.Errorf("%s: %s", r.file, msg)
	}
	return fmt.Errorf("%s: %s: %s", r.file, path, msg)
}

func (r *pirReader) module(root any) error {
	top, ok := root.(map[string]any)
	if !ok {
		return r.errorf("", "not a PIR program: not a JSON object")
	}
	base, ok := top["base_code"].(map[string]any)
	if !ok {
		return r.errorf("", "not a PIR program: no base_code object")
	}
	if magic, _ := base["magic"].(string); magic != "pir" {
		return r.errorf("base_code.magic", "not a PIR program: magic is %s, want \"pir\"", jsonText(base["magic"]))
	}
	prog, ok := top["program"].(map[string]any)
	if !ok {
		return r.errorf("program", "not an object")
	}
	regions, ok := prog["regions"].([]any)
	if !ok {
		return r.errorf("program.regions", "not an array")
	}
	if len(regions) != 1 {
		return r.errorf("program.regions", "%d regions; the module op has one", len(regions))
	}
	reg, ok := regions[0].(map[string]any)
	if !ok {
		return r.errorf("program.regions[0]", "not an object")
	}
	blocks, ok := reg["blocks"].([]any)
	if !ok {
		return r.errorf("program.regions[0].blocks", "not an array")
	}
	if len(blocks) != 1 {
		return r.errorf("program.regions[0].blocks", "%d blocks; the module op's region has one", len(blocks))
	}
	r.prog.AddBlock(-1)
	return r.block(0, blocks[0], "program.regions[0].blocks[0]")
}

func (r *pirReader) block(bi int, jb any, path string) error {
	obj, ok := jb.(map[string]any)
	if !ok {
		return r.errorf(path, "block is not an object")
	}
	args, err := optArray(obj, "args")
	if err != nil {
		return r.errorf(path+".args", "%v", err)
	}
	argIDs := make(map[int64]bool, len(args))
	for i, a := range args {
		p := fmt.Sprintf("%s.args[%d]", path, i)
		id, t, err := r.blockArg(a, p)
		if err != nil {
			return err
		}
		if _, err := r.define(id, "arg"+strconv.FormatInt(-id, 10), bi, t, p); err != nil {
			return err
		}
		argIDs[id] = true
	}
	kwargs, err := optArray(obj, "kwargs")
	if err != nil {
		return r.errorf(path+".kwargs", "%v", err)
	}
	for i, a := range kwargs {
		p := fmt.Sprintf("%s.kwargs[%d]", path, i)
		id, t, err := r.blockArg(a, p)
		if err != nil {
			return err
		}
		if argIDs[id] {
			continue // Paddle writes the positional args under "kwargs"
		}
		name := "arg" + strconv.FormatInt(-id, 10)
		if key, _ := a.(map[string]any)["key"].(string); key != "" {
			name = key
		}
		if _, err := r.define(id, name, bi, t, p); err != nil {
			return err
		}
	}
	ops, err := optArray(obj, "ops")
	if err != nil {
		return r.errorf(path+".ops", "%v", err)
	}
	for i, o := range ops {
		if err := r.op(bi, o, fmt.Sprintf("%s.ops[%d]", path, i)); err != nil {
			return err
		}
	}
	return nil
}

// blockArg reads a block argument: its (negative) id and its type.
func (r *pirReader) blockArg(a any, path string) (int64, any, error) {
	obj, ok := a.(map[string]any)
	if !ok {
		return 0, nil, r.errorf(path, "block argument is not an object")
	}
	id, ok := jsonInt(obj["#"])
	if !ok {
		return 0, nil, r.errorf(path, "block argument has no integer \"#\" id")
	}
	if id >= 0 {
		return 0, nil, r.errorf(path, "block argument id %d is not negative", id)
	}
	return id, obj["TT"], nil
}

// define declares the var of value id in block bi, named want or, when
// that is taken, want_1, want_2...
func (r *pirReader) define(id int64, want string, bi int, typ any, path string) (*ir.Var, error) {
	if _, dup := r.vals[id]; dup {
		return nil, r.errorf(path, "value %d defined twice", id)
	}
	t, keep, err := r.varType(typ, path+".TT")
	if err != nil {
		return nil, err
	}
	v := new(ir.Var)
	*v = ir.Var{Type: t}.Named(r.unique(want))
	if keep != "" {
		v.Attrs.Set("pir_type", ir.String(keep))
	}
	if err := r.prog.Blocks[bi].AddVar(v); err != nil {
		return nil, r.errorf(path, "%v", err)
	}
	r.vals[id] = pirValue{v, bi}
	return v, nil
}

func (r *pirReader) unique(want string) string {
	name := want
	for k := 1; r.names[name]; k++ {
		name = want + "_" + strconv.Itoa(k)
	}
	r.names[name] = true
	return name
}

// use returns the var of value id as seen from block bi.
func (r *pirReader) use(id int64, bi int, path string) (string, error) {
	val, ok := r.vals[id]
	if !ok {
		return "", r.errorf(path, "value %d is not defined before its use", id)
	}
	for b := bi; b >= 0; b = r.prog.Blocks[b].Parent {
		if b == val.block {
			return val.v.Name(), nil
		}
	}
	return "", r.errorf(path, "value %d is defined in block %d, which does not enclose this one", id, val.block)
}

func (r *pirReader) nextID() int64 {
	r.lastID++
	return r.lastID
}

func (r *pirReader) op(bi int, jo any, path string) error {
	o, ok := jo.(map[string]any)
	if !ok {
		return r.errorf(path, "op is not an object")
	}
	id, ok := o["#"].(string)
	if !ok {
		return r.errorf(path, "op has no \"#\" name")
	}
	if id == "p" {
		return r.paramOp(bi, o, path)
	}
	dialect, name, err := splitID(id)
	if err != nil {
		return r.errorf(path, "op %v", err)
	}
	op := &ir.Op{ID: r.nextID(), Type: dialect + "." + name}
	b := r.prog.Blocks[bi]
	b.Ops = append(b.Ops, op)

	ins, err := optArray(o, "I")
	if err != nil {
		return r.errorf(path+".I", "%v", err)
	}
	op.Inputs = make([]ir.Slot, len(ins))
	for k, in := range ins {
		p := fmt.Sprintf("%s.I[%d]", path, k)
		obj, ok := in.(map[string]any)
		if !ok {
			return r.errorf(p, "operand is not an object")
		}
		vid, ok := jsonInt(obj["%"])
		if !ok {
			return r.errorf(p, "operand has no integer \"%%\" id")
		}
		op.Inputs[k] = ir.Slot{Name: "in" + strconv.Itoa(k), Args: []string{}}
		if vid == 0 {
			continue // a null value
		}
		arg, err := r.use(vid, bi, p)
		if err != nil {
			return err
		}
		op.Inputs[k].Args = []string{arg}
	}

	if err := r.attrList(&op.Attrs, o["A"], path+".A"); err != nil {
		return err
	}
	takeRole(op)

	// Regions: their blocks are numbered now and read before the results
	// are defined, so that no op of a region can use them.
	if rv := o["regions"]; rv != nil {
		regs, ok := rv.([]any)
		if !ok {
			return r.errorf(path+".regions", "not an array")
		}
		type sub struct {
			bi   int
			jb   any
			path string
		}
		var subs []sub
		for ri, reg := range regs {
			rp := fmt.Sprintf("%s.regions[%d]", path, ri)
			ro, ok := reg.(map[string]any)
			if !ok {
				return r.errorf(rp, "region is not an object")
			}
			blks, ok := ro["blocks"].([]any)
			if !ok {
				return r.errorf(rp+".blocks", "not an array")
			}
			for bj, jb := range blks {
				nb := r.prog.AddBlock(bi)
				subs = append(subs, sub{nb.Index, jb, fmt.Sprintf("%s.blocks[%d]", rp, bj)})
			}
		}
		refs := make([]int, len(subs))
		for i, s := range subs {
			refs[i] = s.bi
		}
		switch {
		case op.Type == "pd_op.while" && len(refs) == 1:
			op.Attrs.Set("sub_block", ir.BlockRef(refs[0]))
		case len(refs) > 0:
			op.Attrs.Set("sub_blocks", ir.BlockRefs(refs))
		}
		for _, s := range subs {
			if err := r.block(s.bi, s.jb, s.path); err != nil {
				return err
			}
		}
	}

	outs, err := optArray(o, "O")
	if err != nil {
		return r.errorf(path+".O", "%v", err)
	}
	pname, isParam := op.Attrs.String("parameter_name")
	isParam = isParam && pname != "" && op.Type == "builtin.parameter" && len(outs) == 1
	results := make([]*ir.Var, len(outs))
	op.Outputs = make([]ir.Slot, len(outs))
	for k, out := range outs {
		p := fmt.Sprintf("%s.O[%d]", path, k)
		obj, ok := out.(map[string]any)
		if !ok {
			return r.errorf(p, "result is not an object")
		}
		vid, ok := jsonInt(obj["%"])
		if !ok {
			return r.errorf(p, "result has no integer \"%%\" id")
		}
		op.Outputs[k] = ir.Slot{Name: "out" + strconv.Itoa(k), Args: []string{}}
		if vid == 0 {
			continue // a null value
		}
		if vid < 0 {
			return r.errorf(p, "result id %d is negative (only block arguments are)", vid)
		}
		want := "v" + strconv.FormatInt(vid, 10)
		switch {
		case isParam:
			want = pname
		case op.Type == "pd_op.data" && k == 0:
			if s, ok := op.Attrs.String("name"); ok && s != "" {
				want = s
			}
		}
		v, err := r.define(vid, want, bi, obj["TT"], p)
		if err != nil {
			return err
		}
		results[k] = v
		op.Outputs[k].Args = []string{v.Name()}
	}

	oa, err := optArray(o, "OA")
	if err != nil {
		return r.errorf(path+".OA", "%v", err)
	}
	resultFlags(results, oa)

	if isParam && results[0] != nil {
		v := results[0]
		v.Kind = ir.KindParam
		if isp, ok := boolish(op.Attrs.Get("is_parameter")); ok && !isp {
			v.Kind = ir.KindPersist
		}
		if t, ok := boolish(op.Attrs.Get("trainable")); ok && t {
			v.Flags |= ir.FlagTrainable
		}
		if c, ok := boolish(op.Attrs.Get("need_clip")); ok && c {
			v.Flags |= ir.FlagNeedClip
		}
		op.Outputs = nil
	}
	return nil
}

// paramOp reads Paddle's compressed parameter op:
// {"#":"p", "A":[is_distributed, is_parameter, need_clip, name],
// "O":{value}, "DA":[attrs], "QA":[attrs], "OA":[persistable, stop_gradient, trainable]}.
func (r *pirReader) paramOp(bi int, o map[string]any, path string) error {
	op := &ir.Op{ID: r.nextID(), Type: "builtin.parameter"}
	b := r.prog.Blocks[bi]
	b.Ops = append(b.Ops, op)

	a, ok := o["A"].([]any)
	if !ok || len(a) != 4 {
		return r.errorf(path+".A", "parameter op attrs are not [is_distributed, is_parameter, need_clip, name]")
	}
	isDist, ok1 := flag01(a[0])
	isParam, ok2 := flag01(a[1])
	needClip, ok3 := flag01(a[2])
	pname, ok4 := a[3].(string)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return r.errorf(path+".A", "parameter op attrs are not [is_distributed, is_parameter, need_clip, name]")
	}
	op.Attrs.Set("parameter_name", ir.String(pname))
	if err := r.attrList(&op.Attrs, o["DA"], path+".DA"); err != nil {
		return err
	}
	if err := r.attrList(&op.Attrs, o["QA"], path+".QA"); err != nil {
		return err
	}
	takeRole(op)

	res, ok := o["O"].(map[string]any)
	if !ok {
		return r.errorf(path+".O", "parameter op result is not an object")
	}
	vid, ok := jsonInt(res["%"])
	if !ok || vid <= 0 {
		return r.errorf(path+".O", "parameter op result has no positive \"%%\" id")
	}
	want := pname
	if want == "" {
		want = "v" + strconv.FormatInt(vid, 10)
	}
	v, err := r.define(vid, want, bi, res["TT"], path+".O")
	if err != nil {
		return err
	}
	v.Kind = ir.KindPersist
	if isParam {
		v.Kind = ir.KindParam
	}
	if needClip {
		v.Flags |= ir.FlagNeedClip
	}
	if isDist {
		v.Attrs.Set("is_distributed", ir.Bool(true))
	}
	if oav, present := o["OA"]; present && oav != nil {
		oa, ok := oav.([]any)
		if !ok || len(oa) != 3 {
			return r.errorf(path+".OA", "parameter op result attrs are not [persistable, stop_gradient, trainable]")
		}
		_, ok1 := flag01(oa[0])
		stop, ok2 := flag01(oa[1])
		train, ok3 := flag01(oa[2])
		if !ok1 || !ok2 || !ok3 {
			return r.errorf(path+".OA", "parameter op result attrs are not [persistable, stop_gradient, trainable]")
		}
		if stop {
			v.Flags |= ir.FlagStopGradient
		}
		if train {
			v.Flags |= ir.FlagTrainable
		}
	}
	return nil
}

// takeRole moves an integer op_role that is a valid role into the op's Role.
func takeRole(op *ir.Op) {
	n, ok := op.Attrs.Int("op_role")
	if !ok || n < 0 || n > math.MaxUint32 || !ir.Role(n).Valid() {
		return
	}
	op.Role = ir.Role(n)
	op.Attrs.Delete("op_role")
}

// resultFlags sets stop_gradient on the result vars the op's result attrs
// mark. Anything else in them is ignored.
func resultFlags(results []*ir.Var, oa []any) {
	for _, a := range oa {
		obj, _ := a.(map[string]any)
		if n, _ := obj["N"].(string); n != "stop_gradient" {
			continue
		}
		at, _ := obj["AT"].(map[string]any)
		if id, _ := at["#"].(string); id != "0.a_array" {
			continue
		}
		elems, _ := at["D"].([]any)
		for k, e := range elems {
			eo, _ := e.(map[string]any)
			if id, _ := eo["#"].(string); id != "0.a_bool" {
				continue
			}
			if set, _ := eo["D"].(bool); set && k < len(results) && results[k] != nil {
				results[k].Flags |= ir.FlagStopGradient
			}
		}
	}
}

// varType maps a PIR type to an IR type. keep is the type's JSON when the
// IR type does not say all of it (it goes to the var attr pir_type).
func (r *pirReader) varType(t any, path string) (typ ir.Type, keep string, err error) {
	obj, ok := t.(map[string]any)
	if !ok {
		return ir.Type{}, "", r.errorf(path, "type is not an object")
	}
	id, ok := obj["#"].(string)
	if !ok {
		return ir.Type{}, "", r.errorf(path, "type has no \"#\" id")
	}
	raw := ir.NoShape(ir.Raw)
	if id == "NULL" {
		return raw, jsonText(obj), nil
	}
	dialect, name, err := splitID(id)
	if err != nil {
		return ir.Type{}, "", r.errorf(path, "type %v", err)
	}
	switch dialect + "." + name {
	case "builtin.t_dtensor":
		dt, ok, err := r.denseType(obj["D"], path+".D")
		if err != nil {
			return ir.Type{}, "", err
		}
		if ok {
			return dt, "", nil
		}
		return raw, jsonText(obj), nil
	case "pd_op.t_dense_tensor_array":
		return ir.NoShape(ir.TensorArray), jsonText(obj), nil
	case "dist.t_dist_dtensor":
		d, _ := obj["D"].([]any)
		if len(d) > 0 {
			if inner, _ := d[0].(map[string]any); inner != nil {
				if id, _ := inner["#"].(string); id == "0.t_dtensor" {
					dt, ok, err := r.denseType(inner["D"], path+".D[0].D")
					if err != nil {
						return ir.Type{}, "", err
					}
					if ok {
						return dt, jsonText(obj), nil
					}
				}
			}
		}
		return raw, jsonText(obj), nil
	}
	return raw, jsonText(obj), nil
}

// denseType reads the D of a t_dtensor, [dtype, dims, layout, lod, offset].
// ok is false when the IR cannot hold the tensor (its element type, or a
// dim below -1, or too many elements); a D of the wrong shape is an error.
func (r *pirReader) denseType(d any, path string) (ir.Type, bool, error) {
	parts, ok := d.([]any)
	if !ok || len(parts) < 2 {
		return ir.Type{}, false, r.errorf(path, "dense tensor type data is not [dtype, dims, ...]")
	}
	et, ok := parts[0].(map[string]any)
	if !ok {
		return ir.Type{}, false, r.errorf(path+"[0]", "element type is not an object")
	}
	eid, ok := et["#"].(string)
	if !ok {
		return ir.Type{}, false, r.errorf(path+"[0]", "element type has no \"#\" id")
	}
	jdims, ok := parts[1].([]any)
	if !ok {
		return ir.Type{}, false, r.errorf(path+"[1]", "dims are not an array")
	}
	dims := make([]int64, len(jdims))
	holdable := true
	n := uint64(1)
	for i, jd := range jdims {
		v, ok := jsonInt(jd)
		if !ok {
			return ir.Type{}, false, r.errorf(fmt.Sprintf("%s[1][%d]", path, i), "dim is not an integer")
		}
		dims[i] = v
		switch {
		case v < -1:
			holdable = false
		case v >= 0:
			hi, lo := bits.Mul64(n, uint64(v))
			if hi != 0 || lo > math.MaxInt64 {
				holdable = false
			}
			n = lo
		}
	}
	dt, known := ir.DTypeInvalid, false
	if dialect, name, err := splitID(eid); err != nil {
		return ir.Type{}, false, r.errorf(path+"[0]", "element type %v", err)
	} else if dialect == "builtin" {
		dt, known = pirDTypes[name]
	}
	if !known || !holdable {
		return ir.Type{}, false, nil
	}
	return ir.Tensor(dt, dims...), true, nil
}

// attrList reads a list of {"N": name, "AT": value} into dst.
func (r *pirReader) attrList(dst *ir.Attrs, v any, path string) error {
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		return r.errorf(path, "not an array")
	}
	for i, a := range list {
		p := fmt.Sprintf("%s[%d]", path, i)
		obj, ok := a.(map[string]any)
		if !ok {
			return r.errorf(p, "attr is not an object")
		}
		n, ok := obj["N"].(string)
		if !ok || n == "" {
			return r.errorf(p, "attr has no name")
		}
		if dst.Has(n) {
			return r.errorf(p, "attr %q given twice", n)
		}
		val, err := r.attrValue(obj["AT"], p+".AT")
		if err != nil {
			return err
		}
		dst.Set(n, val)
	}
	return nil
}

// attrValue maps a PIR attribute to an IR value; what has no IR kind is
// kept as a String of its JSON.
func (r *pirReader) attrValue(at any, path string) (ir.Value, error) {
	obj, ok := at.(map[string]any)
	if !ok {
		return nil, r.errorf(path, "attr value is not an object")
	}
	id, ok := obj["#"].(string)
	if !ok {
		return nil, r.errorf(path, "attr value has no \"#\" id")
	}
	if id == "NULL" {
		return ir.String(jsonText(obj)), nil
	}
	dialect, name, err := splitID(id)
	if err != nil {
		return nil, r.errorf(path, "attr %v", err)
	}
	if v, ok := scalarAttr(dialect, name, obj); ok {
		return v, nil
	}
	switch dialect + "." + name {
	case "builtin.a_array":
		if v, ok, err := r.arrayAttr(obj["D"], path+".D"); err != nil {
			return nil, err
		} else if ok {
			return v, nil
		}
	case "pd_op.a_intarray":
		if d, ok := obj["D"].([]any); ok {
			xs := make(ir.Ints, len(d))
			for i, e := range d {
				if xs[i], ok = jsonInt(e); !ok {
					break
				}
			}
			if ok {
				return xs, nil
			}
		}
	case "pd_op.a_place":
		if d, ok := obj["D"].([]any); ok && len(d) == 3 {
			typ, ok1 := jsonInt(d[0])
			dev, ok2 := jsonInt(d[1])
			devType, ok3 := d[2].(string)
			if ok1 && ok2 && ok3 {
				return ir.Strings{strconv.FormatInt(typ, 10), strconv.FormatInt(dev, 10), devType}, nil
			}
		}
	}
	return ir.String(jsonText(obj)), nil
}

// scalarAttr maps the attrs of one IR scalar kind.
func scalarAttr(dialect, name string, obj map[string]any) (ir.Value, bool) {
	d := obj["D"]
	switch dialect + "." + name {
	case "builtin.a_bool":
		if b, ok := d.(bool); ok {
			return ir.Bool(b), true
		}
	case "builtin.a_i32", "builtin.a_i64", "builtin.a_index":
		if i, ok := jsonInt(d); ok {
			return ir.Int(i), true
		}
	case "builtin.a_f32", "builtin.a_f64":
		if vd, ok := obj["VD"].(string); ok {
			switch vd {
			case "NaN":
				return ir.Float(math.NaN()), true
			case "INF":
				return ir.Float(math.Inf(1)), true
			case "-INF":
				return ir.Float(math.Inf(-1)), true
			}
			return nil, false
		}
		if n, ok := d.(json.Number); ok {
			if f, err := n.Float64(); err == nil {
				return ir.Float(f), true
			}
		}
	case "builtin.a_str", "builtin.a_tensorname", "pd_op.a_dtype", "pd_op.a_layout":
		if s, ok := d.(string); ok {
			return ir.String(s), true
		}
	}
	return nil, false
}

// arrayAttr maps an a_array whose elements all map to one scalar kind to
// the list of that kind. ok is false for other arrays.
func (r *pirReader) arrayAttr(d any, path string) (ir.Value, bool, error) {
	elems, ok := d.([]any)
	if !ok {
		return nil, false, nil
	}
	if len(elems) == 0 {
		return ir.Ints{}, true, nil
	}
	vals := make([]ir.Value, len(elems))
	for i, e := range elems {
		obj, ok := e.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		id, ok := obj["#"].(string)
		if !ok || id == "NULL" {
			return nil, false, nil
		}
		dialect, name, err := splitID(id)
		if err != nil {
			return nil, false, r.errorf(fmt.Sprintf("%s[%d]", path, i), "attr %v", err)
		}
		v, ok := scalarAttr(dialect, name, obj)
		if !ok || i > 0 && v.Kind() != vals[0].Kind() {
			return nil, false, nil
		}
		vals[i] = v
	}
	switch vals[0].(type) {
	case ir.Bool:
		xs := make(ir.Bools, len(vals))
		for i, v := range vals {
			xs[i] = bool(v.(ir.Bool))
		}
		return xs, true, nil
	case ir.Int:
		xs := make(ir.Ints, len(vals))
		for i, v := range vals {
			xs[i] = int64(v.(ir.Int))
		}
		return xs, true, nil
	case ir.Float:
		xs := make(ir.Floats, len(vals))
		for i, v := range vals {
			xs[i] = float64(v.(ir.Float))
		}
		return xs, true, nil
	case ir.String:
		xs := make(ir.Strings, len(vals))
		for i, v := range vals {
			xs[i] = string(v.(ir.String))
		}
		return xs, true, nil
	}
	return nil, false, nil
}

// splitID splits a "<dialect id>.<name>" id at its first dot.
func splitID(id string) (dialect, name string, err error) {
	i := strings.IndexByte(id, '.')
	if i < 0 {
		return "", "", fmt.Errorf("id %q is not <dialect id>.<name>", id)
	}
	d, ok := pirDialects[id[:i]]
	if !ok {
		return "", "", fmt.Errorf("id %q: unknown dialect id %q", id, id[:i])
	}
	if id[i+1:] == "" {
		return "", "", fmt.Errorf("id %q has no name", id)
	}
	return d, id[i+1:], nil
}

// optArray returns obj[key] as an array; absent or null is empty.
func optArray(obj map[string]any, key string) ([]any, error) {
	v := obj[key]
	if v == nil {
		return nil, nil
	}
	a, ok := v.([]any)
	if !ok {
		return nil, errors.New("not an array")
	}
	return a, nil
}

// jsonInt returns v as an int64 when it is an integer JSON number.
func jsonInt(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

// flag01 reads a flag written as 0/1 or as a JSON boolean.
func flag01(v any) (bool, bool) {
	if b, ok := v.(bool); ok {
		return b, true
	}
	switch i, ok := jsonInt(v); {
	case ok && i == 0:
		return false, true
	case ok && i == 1:
		return true, true
	}
	return false, false
}

// boolish reads a Bool attr or the first element of a Bools attr.
func boolish(v ir.Value) (bool, bool) {
	switch v := v.(type) {
	case ir.Bool:
		return bool(v), true
	case ir.Bools:
		if len(v) > 0 {
			return v[0], true
		}
	}
	return false, false
}

// jsonText is the compact JSON of a decoded value, without HTML escaping.
func jsonText(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
