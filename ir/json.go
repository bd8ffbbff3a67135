package ir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// jsonVersion is the schema version EncodeJSON writes and DecodeJSON accepts.
const jsonVersion = 1

// EncodeJSON returns m as JSON, for tools outside Go; DecodeJSON reads it
// back, and DecodeJSON(EncodeJSON(m)) is Equal to m. The output depends only
// on m's structure: it is indented by two spaces, puts each array or object
// below the top level that contains no object on one line, and ends with a
// newline.
//
// The schema (version 1) mirrors the IR, with enums spelled as in the text
// format. A module with one parameter and one op:
//
//	{
//	  "version": 1,
//	  "name": "tiny",
//	  "meshes": [
//	    {"name": "m", "shape": [2], "dims": ["x"], "ranks": [0, 1]}
//	  ],
//	  "groups": [],
//	  "main": {
//	    "name": "main",
//	    "rank": -1,
//	    "blocks": [
//	      {
//	        "index": 0,
//	        "parent": -1,
//	        "forward": -1,
//	        "vars": [
//	          {
//	            "name": "w",
//	            "kind": "param",
//	            "type": {"kind": "tensor", "dtype": "f32", "shape": [8, -1]},
//	            "flags": ["trainable"],
//	            "dist": {"mesh": "m", "dims_mapping": [0, -1]}
//	          }
//	        ],
//	        "ops": [
//	          {
//	            "id": 1,
//	            "type": "scale",
//	            "inputs": [
//	              {"name": "X", "args": ["w"]}
//	            ],
//	            "outputs": [
//	              {"name": "Out", "args": ["w"]}
//	            ],
//	            "attrs": [
//	              {"name": "scale", "kind": "float", "value": "inf"}
//	            ],
//	            "role": "backward|loss",
//	            "fwd": 7
//	          }
//	        ]
//	      }
//	    ]
//	  },
//	  "param_grads": [
//	    {"param": "w", "grad": "w@GRAD"}
//	  ]
//	}
//
// Details:
//
//   - "version" is required and must be 1. "startup", like "main", is
//     absent when the module has no such program; a program's "rank" is -1
//     for a serial program.
//   - A var's "kind" is var, persist or param. A type's "kind" is tensor,
//     with a "dtype" (bool, u8, i8, i16, i32, i64, f16, bf16, f32, f64), a
//     "shape" (-1 an unknown dim, [] a scalar) and, when declared, a "lod"
//     level; or one of the no-shape kinds (reader, step_scopes,
//     tensor_array, feed_list, fetch_list, raw, selected_rows,
//     lod_rank_table, place_list, tuple, string, strings, vocab,
//     feed_var_list, pstring, sparse_coo, sparse_csr, fetch_var_list), with
//     none of those but, when the type has them, "elems": a list of types
//     (a tuple's elements have a dtype or a kind and no shape).
//   - A var's "flags" are names: is_data, need_check_feed, need_clip,
//     stop_gradient, trainable, written in that order. Its "dist" is
//     {"mesh", "dims_mapping", "partial", "local"}, each partial {"dim",
//     "reduce"} with reduce sum, avg, max or min, "local" a list of mesh
//     dims (the text's local [...]).
//   - An op's "role" is a single string, the names of its role bits joined
//     by "|" as in the text format: "forward", "backward", "forward|loss",
//     "backward|loss", "optimize|lrsched". "fwd" is a grad op's forward op
//     id. An op's "dist" is {"mesh", "impl_type", "impl_index", "recompute",
//     "inputs", "outputs"}, the last two lists of {"name", "dims_mapping"}.
//   - An attribute is {"name", "kind", "value"} with kind bool, int, float,
//     string, bools, ints, floats, strings, block, blocks, long, longs,
//     float64, float64s, var, vars, scalar or scalars (block refs are block
//     indexes, var refs var names). Integers are exact 64-bit values. A
//     float is a JSON number (-0 included) or one of the strings "nan",
//     "inf" and "-inf". A scalar is {"bool": true}, {"long": 3},
//     {"float64": 0.5} or {"complex": [1, -2]}. Attributes are written
//     sorted by name. The module's own attrs are its "attrs".
//   - A params-grads entry's "grad" is absent when the parameter has no
//     gradient.
//   - A var's "flags", "attrs" and "dist", an op's "attrs", "fwd" and
//     "dist", and a dist's "partial" and "local" are absent when empty or
//     zero.
//
// When decoding, every member but "version" may be left out and then takes
// its zero value, except that a program's "name" defaults to its slot's
// ("main" or "startup"), "rank", "parent" and "forward" default to -1,
// "index" to the block's position, var and type "kind" to var and tensor,
// "role" to forward, and "reduce" to sum. A null member counts as left out;
// null is never a valid array element. Unknown members are errors, so that
// a misspelt member is not silently dropped. Attributes may come in any
// order. A module the text format cannot say is refused, so that what
// DecodeJSON returns prints to text that Parse reads back to it: one
// without "main", a program without blocks, named otherwise than its
// slot or with a rank below -1, an integer outside 32 bits where the
// text reads 32 (mesh shapes and ranks, group ids and ranks, ranks,
// parents, forwards, mappings, partial and local dims, lod levels, impl
// indexes, block refs), a negative lod level, partial or local dims not
// ascending and unique, and a var attribute named as a flag.
//
// EncodeJSON fails on what the schema cannot express or DecodeJSON would
// reject: nil meshes, blocks, vars, ops or attribute values, a block whose
// Index is not its position, a var declared twice in a block, attributes
// not sorted by unique name, invalid scalars, out-of-range enums, unknown
// role or flag bits, a tensor without a valid dtype, a no-shape type with a
// dtype or shape, strings that are not valid UTF-8, and what the text
// format cannot say (above).
func EncodeJSON(m *Module) ([]byte, error) {
	if m == nil {
		return nil, errors.New("nil module")
	}
	jm, err := encodeModule(m)
	if err == nil {
		err = textProblem(m)
	}
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(jm); err != nil {
		return nil, err
	}
	return indentJSON(buf.Bytes()), nil
}

// DecodeJSON reads a module written by EncodeJSON, in the schema documented
// there. Errors name the location of the fault, as in
// `main block 0 var "x": unknown dtype "f33"`. DecodeJSON checks only what it
// needs to build the module (the verifier checks the rest): it rejects
// duplicate var names in a block and duplicate attribute names, requires
// each block's index to be its position, and never panics.
func DecodeJSON(data []byte) (*Module, error) {
	m, _, err := decodeJSON(data)
	return m, err
}

// decodeJSON is DecodeJSON; it also returns the offset of the byte where
// malformed JSON, its early end or data after the module starts, or -1
// when the error is not at one byte.
func decodeJSON(data []byte) (*Module, int64, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var jm jsonModule
	if err := dec.Decode(&jm); err != nil {
		off := int64(-1)
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			off = se.Offset - 1 // the offending byte is the last one read
		case err == io.ErrUnexpectedEOF:
			off = int64(len(data))
		}
		return nil, off, jsonError(err)
	}
	off := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		for off < int64(len(data)) && strings.IndexByte(" \t\r\n", data[off]) >= 0 {
			off++
		}
		return nil, off, errors.New("json: data after the module")
	}
	m, err := decodeModule(&jm)
	if err == nil {
		err = textProblem(m)
	}
	if err != nil {
		return nil, -1, err
	}
	return m, -1, nil
}

// JSONError is an error of ParseJSON: the file, what is wrong and, when
// the fault is at one byte (malformed JSON, an early end, data after the
// module), its line and column (1-based; the column counts bytes), else
// 0 and 0.
type JSONError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *JSONError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// ParseJSON is DecodeJSON for the contents of a file called name: its
// errors are *JSONError, which name the file and, for malformed JSON, the
// line and column, as Parse does for text ("m.json:3:14: invalid
// character '}' looking for beginning of object key string"); the rest
// name the member or the module's part at fault ("m.json: main block 0
// var "x": unknown dtype "f33"").
func ParseJSON(name string, data []byte) (*Module, error) {
	m, off, err := decodeJSON(data)
	if err == nil {
		return m, nil
	}
	e := &JSONError{File: name, Msg: err.Error()}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		e.Msg = se.Error()
	}
	e.Msg = strings.TrimPrefix(e.Msg, "json: ")
	if off >= 0 {
		e.Line, e.Col = lineCol(data, off)
	}
	return nil, e
}

// lineCol returns the 1-based line and byte column of data[off].
func lineCol(data []byte, off int64) (int, int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	return bytes.Count(before, []byte{'\n'}) + 1, len(before) - (bytes.LastIndexByte(before, '\n') + 1) + 1
}

// CheckJSONSyntax returns nil when data is one JSON value (white space
// around it allowed), and otherwise a *JSONError at the line and column
// where it stops being one, whatever the schema: for callers that tell
// formats apart by content and would otherwise only say "not a ...".
func CheckJSONSyntax(name string, data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var v json.RawMessage
	err := dec.Decode(&v)
	var se *json.SyntaxError
	switch {
	case err == nil:
		off := dec.InputOffset()
		if _, err := dec.Token(); err == io.EOF {
			return nil
		}
		for off < int64(len(data)) && strings.IndexByte(" \t\r\n", data[off]) >= 0 {
			off++
		}
		line, col := lineCol(data, off)
		return &JSONError{File: name, Line: line, Col: col, Msg: "data after the JSON value"}
	case errors.As(err, &se):
		line, col := lineCol(data, se.Offset-1)
		return &JSONError{File: name, Line: line, Col: col, Msg: se.Error()}
	case err == io.EOF:
		return &JSONError{File: name, Msg: "empty input"}
	case err == io.ErrUnexpectedEOF:
		line, col := lineCol(data, int64(len(data)))
		return &JSONError{File: name, Line: line, Col: col, Msg: "unexpected end of input"}
	}
	return &JSONError{File: name, Msg: err.Error()}
}

// EncodeAttrsJSON returns an attribute list as the JSON array EncodeJSON
// writes for one (compact, on one line), for formats that embed IR
// attributes; DecodeAttrsJSON reads it back.
func EncodeAttrsJSON(as Attrs) ([]byte, error) {
	ja, err := encodeAttrs("attrs", as)
	if err != nil {
		return nil, err
	}
	if ja == nil {
		ja = []*jsonAttr{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ja); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// DecodeAttrsJSON reads an attribute list written by EncodeAttrsJSON.
func DecodeAttrsJSON(data []byte) (Attrs, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var ja []*jsonAttr
	if err := dec.Decode(&ja); err != nil {
		return nil, jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("json: data after the attrs")
	}
	return decodeAttrs("attrs", ja)
}

// The DTOs. Lists of objects hold pointers so that a null element is seen.

type jsonModule struct {
	Version    *int             `json:"version"`
	Name       string           `json:"name"`
	Attrs      []*jsonAttr      `json:"attrs,omitempty"`
	Meshes     []*jsonMesh      `json:"meshes"`
	Groups     []*jsonGroup     `json:"groups"`
	Main       *jsonProgram     `json:"main,omitempty"`
	Startup    *jsonProgram     `json:"startup,omitempty"`
	ParamGrads []*jsonParamGrad `json:"param_grads"`
}

type jsonMesh struct {
	Name  string       `json:"name"`
	Shape list[int]    `json:"shape"`
	Dims  list[string] `json:"dims"`
	Ranks list[int]    `json:"ranks"`
}

type jsonGroup struct {
	ID    int       `json:"id"`
	Ranks list[int] `json:"ranks"`
}

type jsonParamGrad struct {
	Param string `json:"param"`
	Grad  string `json:"grad,omitempty"`
}

type jsonProgram struct {
	Name   string       `json:"name"`
	Rank   *int         `json:"rank"`
	Blocks []*jsonBlock `json:"blocks"`
}

type jsonBlock struct {
	Index   *int       `json:"index"`
	Parent  *int       `json:"parent"`
	Forward *int       `json:"forward"`
	Vars    []*jsonVar `json:"vars"`
	Ops     []*jsonOp  `json:"ops"`
}

type jsonVar struct {
	Name  string          `json:"name"`
	Kind  *string         `json:"kind"`
	Type  *jsonType       `json:"type"`
	Flags list[string]    `json:"flags,omitempty"`
	Attrs []*jsonAttr     `json:"attrs,omitempty"`
	Dist  *jsonTensorDist `json:"dist,omitempty"`
}

type jsonType struct {
	Kind  *string      `json:"kind"`
	DType *string      `json:"dtype,omitempty"`
	Shape *list[int64] `json:"shape,omitempty"`
	LoD   *int         `json:"lod,omitempty"`
	Elems *[]*jsonType `json:"elems,omitempty"`
}

type jsonTensorDist struct {
	Mesh        string         `json:"mesh"`
	DimsMapping list[int]      `json:"dims_mapping"`
	Partial     []*jsonPartial `json:"partial,omitempty"`
	Local       list[int]      `json:"local,omitempty"`
}

type jsonPartial struct {
	Dim    int     `json:"dim"`
	Reduce *string `json:"reduce"`
}

type jsonOp struct {
	ID      int64       `json:"id"`
	Type    string      `json:"type"`
	Inputs  []*jsonSlot `json:"inputs"`
	Outputs []*jsonSlot `json:"outputs"`
	Attrs   []*jsonAttr `json:"attrs,omitempty"`
	Role    *string     `json:"role"`
	Fwd     int64       `json:"fwd,omitempty"`
	Dist    *jsonOpDist `json:"dist,omitempty"`
}

type jsonSlot struct {
	Name string       `json:"name"`
	Args list[string] `json:"args"`
}

type jsonOpDist struct {
	Mesh      string         `json:"mesh"`
	ImplType  string         `json:"impl_type"`
	ImplIndex int            `json:"impl_index"`
	Recompute bool           `json:"recompute"`
	Inputs    []*jsonArgDist `json:"inputs"`
	Outputs   []*jsonArgDist `json:"outputs"`
}

type jsonArgDist struct {
	Name        string    `json:"name"`
	DimsMapping list[int] `json:"dims_mapping"`
}

// jsonAttr's Value is built from Go values when encoding and decoded
// (with UseNumber) into nil, bool, json.Number, string, []any or
// map[string]any, which decodeValue checks against Kind.
type jsonAttr struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Value any    `json:"value"`
}

// list is a JSON list of scalars that rejects null elements when decoded
// (encoding/json would silently turn them into zeros).
type list[T any] []T

func (l *list[T]) UnmarshalJSON(b []byte) error {
	var ps []*T
	if err := json.Unmarshal(b, &ps); err != nil {
		return err
	}
	if ps == nil {
		*l = nil
		return nil
	}
	out := make(list[T], len(ps))
	for i, p := range ps {
		if p == nil {
			// Reported like a type error, so that the decoder adds
			// the member's path.
			return &json.UnmarshalTypeError{Value: "null", Type: reflect.TypeFor[T]()}
		}
		out[i] = *p
	}
	*l = out
	return nil
}

// mk returns s as a list that encodes as [] rather than null when empty.
func mk[T any](s []T) list[T] {
	if s == nil {
		return list[T]{}
	}
	return list[T](s)
}

// jsonError rewrites encoding/json's errors in the schema's terms.
func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te):
		where := te.Field
		if where == "" {
			where = "module"
		}
		got := te.Value
		if got == "bool" {
			got = "boolean"
		}
		return fmt.Errorf("json: %s: want %s, got %s", where, jsonTypeName(te.Type), got)
	case err == io.EOF:
		return errors.New("json: empty input")
	case err == io.ErrUnexpectedEOF:
		return errors.New("json: unexpected end of input")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("json: offset %d: %w", se.Offset, se)
	}
	if strings.HasPrefix(err.Error(), "json: ") {
		return err
	}
	return fmt.Errorf("json: %w", err)
}

func jsonTypeName(t reflect.Type) string {
	if t == nil {
		return "value"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Struct, reflect.Map, reflect.Pointer:
		return "object"
	}
	return "value"
}

// Encoding.

func encodeModule(m *Module) (*jsonModule, error) {
	jm := &jsonModule{
		Version:    new(jsonVersion),
		Name:       m.Name,
		Meshes:     make([]*jsonMesh, 0, len(m.Meshes)),
		Groups:     make([]*jsonGroup, 0, len(m.Groups)),
		ParamGrads: make([]*jsonParamGrad, 0, len(m.ParamGrads)),
	}
	if !utf8.ValidString(m.Name) {
		return nil, errUTF8("module name")
	}
	var err error
	if jm.Attrs, err = encodeAttrs("module", m.Attrs); err != nil {
		return nil, err
	}
	for i, pm := range m.Meshes {
		if pm == nil {
			return nil, fmt.Errorf("mesh at position %d is nil", i)
		}
		if !validUTF8(pm.Name) || !validUTF8(pm.DimNames...) {
			return nil, errUTF8(fmt.Sprintf("mesh %q", pm.Name))
		}
		jm.Meshes = append(jm.Meshes, &jsonMesh{Name: pm.Name, Shape: mk(pm.Shape), Dims: mk(pm.DimNames), Ranks: mk(pm.ProcessIDs)})
	}
	for _, g := range m.Groups {
		jm.Groups = append(jm.Groups, &jsonGroup{ID: g.ID, Ranks: mk(g.Ranks)})
	}
	if m.Main != nil {
		if jm.Main, err = encodeProgram("main", m.Main); err != nil {
			return nil, err
		}
	}
	if m.Startup != nil {
		if jm.Startup, err = encodeProgram("startup", m.Startup); err != nil {
			return nil, err
		}
	}
	for _, pg := range m.ParamGrads {
		if !validUTF8(pg.Param, pg.Grad) {
			return nil, errUTF8(fmt.Sprintf("param_grads %q", pg.Param))
		}
		jm.ParamGrads = append(jm.ParamGrads, &jsonParamGrad{Param: pg.Param, Grad: pg.Grad})
	}
	return jm, nil
}

func validUTF8(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

func errUTF8(where string) error {
	return fmt.Errorf("%s: string is not valid UTF-8", where)
}

func encodeProgram(where string, p *Program) (*jsonProgram, error) {
	if !utf8.ValidString(p.Name) {
		return nil, errUTF8(where)
	}
	jp := &jsonProgram{Name: p.Name, Rank: new(p.Rank), Blocks: make([]*jsonBlock, 0, len(p.Blocks))}
	for i, b := range p.Blocks {
		if b == nil {
			return nil, fmt.Errorf("%s: block at position %d is nil", where, i)
		}
		if b.Index != i {
			return nil, fmt.Errorf("%s: block at position %d has index %d", where, i, b.Index)
		}
		jb, err := encodeBlock(fmt.Sprintf("%s block %d", where, i), b)
		if err != nil {
			return nil, err
		}
		jp.Blocks = append(jp.Blocks, jb)
	}
	return jp, nil
}

func encodeBlock(where string, b *Block) (*jsonBlock, error) {
	jb := &jsonBlock{
		Index:   new(b.Index),
		Parent:  new(b.Parent),
		Forward: new(b.Forward),
		Vars:    make([]*jsonVar, 0, len(b.vars)),
		Ops:     make([]*jsonOp, 0, len(b.Ops)),
	}
	seen := make(map[string]bool, len(b.vars))
	for i, v := range b.vars {
		if v == nil {
			return nil, fmt.Errorf("%s: var at position %d is nil", where, i)
		}
		vwhere := fmt.Sprintf("%s var %q", where, v.name)
		if seen[v.name] {
			return nil, fmt.Errorf("%s: declared twice", vwhere)
		}
		seen[v.name] = true
		jv, err := encodeVar(vwhere, v)
		if err != nil {
			return nil, err
		}
		jb.Vars = append(jb.Vars, jv)
	}
	for i, op := range b.Ops {
		if op == nil {
			return nil, fmt.Errorf("%s: op at position %d is nil", where, i)
		}
		jo, err := encodeOp(fmt.Sprintf("%s op %d", where, op.ID), op)
		if err != nil {
			return nil, err
		}
		jb.Ops = append(jb.Ops, jo)
	}
	return jb, nil
}

func encodeVar(where string, v *Var) (*jsonVar, error) {
	if v.Kind > KindParam {
		return nil, fmt.Errorf("%s: unknown var kind %d", where, v.Kind)
	}
	if !utf8.ValidString(v.name) {
		return nil, errUTF8(where)
	}
	jv := &jsonVar{Name: v.name, Kind: new(v.Kind.String())}
	jt, err := encodeType(where, v.Type, false)
	if err != nil {
		return nil, err
	}
	jv.Type = jt
	if unknown := v.Flags &^ (1<<numFlags - 1); unknown != 0 {
		return nil, fmt.Errorf("%s: unknown flags %#x", where, uint16(unknown))
	}
	for i, n := range flagNames {
		if v.Flags&(1<<i) != 0 {
			jv.Flags = append(jv.Flags, n)
		}
	}
	if jv.Attrs, err = encodeAttrs(where, v.Attrs); err != nil {
		return nil, err
	}
	if d := v.Dist; d != nil {
		if !utf8.ValidString(d.Mesh) {
			return nil, errUTF8(where)
		}
		jd := &jsonTensorDist{Mesh: d.Mesh, DimsMapping: mk(d.DimsMapping)}
		for _, p := range d.Partial {
			if p.Reduce >= numReduces {
				return nil, fmt.Errorf("%s: unknown reduce %d", where, p.Reduce)
			}
			jd.Partial = append(jd.Partial, &jsonPartial{Dim: p.Dim, Reduce: new(p.Reduce.String())})
		}
		if len(d.Local) > 0 {
			jd.Local = list[int](d.Local)
		}
		jv.Dist = jd
	}
	return jv, nil
}

// encodeType returns the JSON of t; code is set for a tuple's elements,
// which are a dtype or a kind (a tensor with no dtype is the kind).
func encodeType(where string, t Type, code bool) (*jsonType, error) {
	jt := &jsonType{Kind: new(t.Kind.String())}
	switch {
	case t.Kind == DenseTensor:
		if code && t.DType == DTypeInvalid {
			break
		}
		if !t.DType.Valid() {
			return nil, fmt.Errorf("%s: tensor has dtype %v", where, t.DType)
		}
		jt.DType = new(t.DType.String())
		if !code {
			jt.Shape = new(mk(t.Shape))
		}
		if t.HasLoD {
			jt.LoD = new(t.LoD)
		} else if t.LoD != 0 {
			return nil, fmt.Errorf("%s: lod %d without HasLoD", where, t.LoD)
		}
	case t.Kind >= numTypeKinds:
		return nil, fmt.Errorf("%s: unknown type kind %d", where, t.Kind)
	case t.DType != DTypeInvalid:
		return nil, fmt.Errorf("%s: type %v has a dtype", where, t.Kind)
	case len(t.Shape) > 0:
		return nil, fmt.Errorf("%s: type %v has a shape", where, t.Kind)
	case t.HasLoD || t.LoD != 0:
		return nil, fmt.Errorf("%s: type %v has a lod", where, t.Kind)
	}
	if t.Elems != nil {
		if t.Kind == DenseTensor || code {
			return nil, fmt.Errorf("%s: type %v has elements", where, t.Kind)
		}
		elems := make([]*jsonType, len(t.Elems))
		jt.Elems = &elems
		for i, e := range t.Elems {
			if t.Kind != Tuple && e.Kind != DenseTensor {
				return nil, fmt.Errorf("%s: element %d of %v is a %v", where, i, t.Kind, e.Kind)
			}
			je, err := encodeType(where, e, t.Kind == Tuple)
			if err != nil {
				return nil, err
			}
			elems[i] = je
		}
	}
	return jt, nil
}

func encodeOp(where string, op *Op) (*jsonOp, error) {
	if !op.Role.Valid() {
		return nil, fmt.Errorf("%s: role %v has unknown bits", where, op.Role)
	}
	if !utf8.ValidString(op.Type) {
		return nil, errUTF8(where)
	}
	jo := &jsonOp{ID: op.ID, Type: op.Type, Role: new(op.Role.String()), Fwd: op.Fwd}
	var err error
	if jo.Inputs, err = encodeSlots(where, op.Inputs); err != nil {
		return nil, err
	}
	if jo.Outputs, err = encodeSlots(where, op.Outputs); err != nil {
		return nil, err
	}
	if jo.Attrs, err = encodeAttrs(where, op.Attrs); err != nil {
		return nil, err
	}
	if d := op.Dist; d != nil {
		if !validUTF8(d.Mesh, d.ImplType) {
			return nil, errUTF8(where)
		}
		jd := &jsonOpDist{Mesh: d.Mesh, ImplType: d.ImplType, ImplIndex: d.ImplIndex, Recompute: d.Recompute}
		if jd.Inputs, err = encodeArgDists(where, d.Inputs); err != nil {
			return nil, err
		}
		if jd.Outputs, err = encodeArgDists(where, d.Outputs); err != nil {
			return nil, err
		}
		jo.Dist = jd
	}
	return jo, nil
}

func encodeSlots(where string, ss []Slot) ([]*jsonSlot, error) {
	out := make([]*jsonSlot, len(ss))
	for i, s := range ss {
		if !validUTF8(s.Name) || !validUTF8(s.Args...) {
			return nil, errUTF8(where)
		}
		out[i] = &jsonSlot{Name: s.Name, Args: mk(s.Args)}
	}
	return out, nil
}

func encodeArgDists(where string, as []ArgDist) ([]*jsonArgDist, error) {
	out := make([]*jsonArgDist, len(as))
	for i, a := range as {
		if !utf8.ValidString(a.Name) {
			return nil, errUTF8(where)
		}
		out[i] = &jsonArgDist{Name: a.Name, DimsMapping: mk(a.DimsMapping)}
	}
	return out, nil
}

func encodeAttrs(where string, as Attrs) ([]*jsonAttr, error) {
	if len(as) == 0 {
		return nil, nil
	}
	out := make([]*jsonAttr, len(as))
	for i, a := range as {
		awhere := fmt.Sprintf("%s attr %q", where, a.Name)
		if i > 0 && as[i-1].Name >= a.Name {
			return nil, fmt.Errorf("%s: attrs not sorted by unique name", awhere)
		}
		if !utf8.ValidString(a.Name) {
			return nil, errUTF8(awhere)
		}
		v, err := encodeValue(a.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", awhere, err)
		}
		out[i] = &jsonAttr{Name: a.Name, Kind: a.Value.Kind().String(), Value: v}
	}
	return out, nil
}

// encodeValue returns the Go value encoding/json writes for v.
func encodeValue(v Value) (any, error) {
	switch v := v.(type) {
	case Bool:
		return bool(v), nil
	case Int:
		return int64(v), nil
	case Float:
		return jsonFloat(float64(v)), nil
	case String:
		if !utf8.ValidString(string(v)) {
			return nil, errors.New("string is not valid UTF-8")
		}
		return string(v), nil
	case BlockRef:
		return int(v), nil
	case Bools:
		return mk([]bool(v)), nil
	case Ints:
		return mk([]int64(v)), nil
	case Floats:
		out := make([]any, len(v))
		for i, f := range v {
			out[i] = jsonFloat(f)
		}
		return out, nil
	case Strings:
		if !validUTF8(v...) {
			return nil, errors.New("string is not valid UTF-8")
		}
		return mk([]string(v)), nil
	case BlockRefs:
		return mk([]int(v)), nil
	case Long:
		return int64(v), nil
	case Longs:
		return mk([]int64(v)), nil
	case Float64:
		return jsonFloat(float64(v)), nil
	case Float64s:
		out := make([]any, len(v))
		for i, f := range v {
			out[i] = jsonFloat(f)
		}
		return out, nil
	case VarRef:
		if !utf8.ValidString(string(v)) {
			return nil, errors.New("string is not valid UTF-8")
		}
		return string(v), nil
	case VarRefs:
		if !validUTF8(v...) {
			return nil, errors.New("string is not valid UTF-8")
		}
		return mk([]string(v)), nil
	case Scalar:
		return encodeScalar(v)
	case Scalars:
		out := make([]any, len(v))
		for i, x := range v {
			var err error
			if out[i], err = encodeScalar(x); err != nil {
				return nil, err
			}
		}
		return out, nil
	case nil:
		return nil, errors.New("nil value")
	}
	return nil, fmt.Errorf("unknown value type %T", v)
}

// encodeScalar returns a scalar as a one-member object: {"bool": true},
// {"long": 3}, {"float64": 0.5} or {"complex": [1, -2]}.
func encodeScalar(x Scalar) (any, error) {
	if !x.Valid() {
		return nil, fmt.Errorf("invalid scalar %+v", x)
	}
	switch x.Type {
	case ScalarBool:
		return map[string]any{"bool": x.B}, nil
	case ScalarLong:
		return map[string]any{"long": x.I}, nil
	case ScalarFloat64:
		return map[string]any{"float64": jsonFloat(x.R)}, nil
	}
	return map[string]any{"complex": []any{jsonFloat(x.R), jsonFloat(x.Im)}}, nil
}

// jsonFloat returns f as a JSON number, or as "nan", "inf" or "-inf".
func jsonFloat(f float64) any {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return f
}

// Decoding.

func decodeModule(jm *jsonModule) (*Module, error) {
	if jm.Version == nil {
		return nil, errors.New("missing version")
	}
	if *jm.Version != jsonVersion {
		return nil, fmt.Errorf("unsupported version %d (want %d)", *jm.Version, jsonVersion)
	}
	m := &Module{Name: jm.Name}
	var err error
	if m.Attrs, err = decodeAttrs("module", jm.Attrs); err != nil {
		return nil, err
	}
	for i, jpm := range jm.Meshes {
		if jpm == nil {
			return nil, fmt.Errorf("mesh at position %d is null", i)
		}
		m.Meshes = append(m.Meshes, &ProcessMesh{Name: jpm.Name, Shape: jpm.Shape, DimNames: jpm.Dims, ProcessIDs: jpm.Ranks})
	}
	for i, jg := range jm.Groups {
		if jg == nil {
			return nil, fmt.Errorf("group at position %d is null", i)
		}
		m.Groups = append(m.Groups, Group{ID: jg.ID, Ranks: jg.Ranks})
	}
	if jm.Main != nil {
		if m.Main, err = decodeProgram("main", jm.Main); err != nil {
			return nil, err
		}
	}
	if jm.Startup != nil {
		if m.Startup, err = decodeProgram("startup", jm.Startup); err != nil {
			return nil, err
		}
	}
	for i, jpg := range jm.ParamGrads {
		if jpg == nil {
			return nil, fmt.Errorf("param_grad at position %d is null", i)
		}
		m.ParamGrads = append(m.ParamGrads, ParamGrad{Param: jpg.Param, Grad: jpg.Grad})
	}
	return m, nil
}

func orDefault(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

func decodeProgram(where string, jp *jsonProgram) (*Program, error) {
	name := jp.Name
	if name == "" {
		name = where // the slot's name, "main" or "startup"
	}
	p := &Program{Name: name, Rank: orDefault(jp.Rank, -1), Blocks: make([]*Block, 0, len(jp.Blocks))}
	for i, jb := range jp.Blocks {
		if jb == nil {
			return nil, fmt.Errorf("%s: block at position %d is null", where, i)
		}
		if idx := orDefault(jb.Index, i); idx != i {
			return nil, fmt.Errorf("%s: block at position %d has index %d", where, i, idx)
		}
		b, err := decodeBlock(fmt.Sprintf("%s block %d", where, i), i, jb)
		if err != nil {
			return nil, err
		}
		p.Blocks = append(p.Blocks, b)
	}
	if v := nestingProblem(p); v != nil {
		v.Program = where
		return nil, v
	}
	return p, nil
}

func decodeBlock(where string, index int, jb *jsonBlock) (*Block, error) {
	b := &Block{Index: index, Parent: orDefault(jb.Parent, -1), Forward: orDefault(jb.Forward, -1)}
	for i, jv := range jb.Vars {
		if jv == nil {
			return nil, fmt.Errorf("%s: var at position %d is null", where, i)
		}
		vwhere := fmt.Sprintf("%s var %q", where, jv.Name)
		v, err := decodeVar(vwhere, jv)
		if err != nil {
			return nil, err
		}
		if b.AddVar(v) != nil {
			return nil, fmt.Errorf("%s: declared twice", vwhere)
		}
	}
	if jb.Ops != nil {
		b.Ops = make([]*Op, 0, len(jb.Ops))
	}
	for i, jo := range jb.Ops {
		if jo == nil {
			return nil, fmt.Errorf("%s: op at position %d is null", where, i)
		}
		op, err := decodeOp(fmt.Sprintf("%s op %d", where, jo.ID), jo)
		if err != nil {
			return nil, err
		}
		b.Ops = append(b.Ops, op)
	}
	return b, nil
}

func decodeVar(where string, jv *jsonVar) (*Var, error) {
	v := &Var{name: jv.Name}
	if jv.Kind != nil {
		switch *jv.Kind {
		case "var":
			v.Kind = KindVar
		case "persist":
			v.Kind = KindPersist
		case "param":
			v.Kind = KindParam
		default:
			return nil, fmt.Errorf("%s: unknown var kind %q", where, *jv.Kind)
		}
	}
	if jv.Type == nil {
		return nil, fmt.Errorf("%s: missing type", where)
	}
	var err error
	if v.Type, err = decodeType(where, jv.Type, false); err != nil {
		return nil, err
	}
	for _, f := range jv.Flags {
		bit, ok := flagByName(f)
		if !ok {
			return nil, fmt.Errorf("%s: unknown flag %q", where, f)
		}
		v.Flags |= bit
	}
	if v.Attrs, err = decodeAttrs(where, jv.Attrs); err != nil {
		return nil, err
	}
	if jd := jv.Dist; jd != nil {
		d := &TensorDist{Mesh: jd.Mesh, DimsMapping: jd.DimsMapping}
		if d.DimsMapping == nil {
			d.DimsMapping = []int{}
		}
		for i, jp := range jd.Partial {
			if jp == nil {
				return nil, fmt.Errorf("%s: partial at position %d is null", where, i)
			}
			r := ReduceSum
			if jp.Reduce != nil {
				var ok bool
				if r, ok = parseReduce(*jp.Reduce); !ok {
					return nil, fmt.Errorf("%s: unknown reduce %q", where, *jp.Reduce)
				}
			}
			d.Partial = append(d.Partial, Partial{Dim: jp.Dim, Reduce: r})
		}
		if len(jd.Local) > 0 {
			d.Local = jd.Local
		}
		v.Dist = d
	}
	return v, nil
}

// decodeType reads a type; code is set for a tuple's elements.
func decodeType(where string, jt *jsonType, code bool) (Type, error) {
	var t Type
	if jt.Kind == nil || *jt.Kind == "tensor" {
		if jt.DType == nil {
			if code {
				return Type{Kind: DenseTensor}, nil
			}
			return t, fmt.Errorf("%s: missing dtype", where)
		}
		d, ok := ParseDType(*jt.DType)
		if !ok {
			return t, fmt.Errorf("%s: unknown dtype %q", where, *jt.DType)
		}
		t = Type{Kind: DenseTensor, DType: d}
		if !code {
			t.Shape = []int64{}
		}
		if jt.Shape != nil && *jt.Shape != nil {
			if code {
				return t, fmt.Errorf("%s: tuple element has a shape", where)
			}
			t.Shape = *jt.Shape
		}
		if jt.LoD != nil {
			if code {
				return t, fmt.Errorf("%s: tuple element has a lod", where)
			}
			t.LoD, t.HasLoD = *jt.LoD, true
		}
		if jt.Elems != nil && *jt.Elems != nil {
			return t, fmt.Errorf("%s: tensor has elements", where)
		}
		return t, nil
	}
	k, ok := parseNoShapeKind(*jt.Kind)
	if !ok {
		return t, fmt.Errorf("%s: unknown type kind %q", where, *jt.Kind)
	}
	if jt.DType != nil {
		return t, fmt.Errorf("%s: type %v has a dtype", where, k)
	}
	if jt.Shape != nil && len(*jt.Shape) > 0 {
		return t, fmt.Errorf("%s: type %v has a shape", where, k)
	}
	if jt.LoD != nil {
		return t, fmt.Errorf("%s: type %v has a lod", where, k)
	}
	t = NoShape(k)
	if jt.Elems != nil && *jt.Elems != nil {
		if code {
			return t, fmt.Errorf("%s: tuple element has elements", where)
		}
		t.Elems = make([]Type, len(*jt.Elems))
		for i, je := range *jt.Elems {
			if je == nil {
				return t, fmt.Errorf("%s: element %d of %v is null", where, i, k)
			}
			e, err := decodeType(where, je, k == Tuple)
			if err != nil {
				return t, err
			}
			if k != Tuple && e.Kind != DenseTensor {
				return t, fmt.Errorf("%s: element %d of %v is a %v", where, i, k, e.Kind)
			}
			t.Elems[i] = e
		}
	}
	return t, nil
}

func decodeOp(where string, jo *jsonOp) (*Op, error) {
	op := &Op{ID: jo.ID, Type: jo.Type, Fwd: jo.Fwd}
	if jo.Role != nil {
		for _, part := range strings.Split(*jo.Role, "|") {
			bit, ok := roleBit(part)
			if !ok {
				return nil, fmt.Errorf("%s: unknown role %q", where, *jo.Role)
			}
			op.Role |= bit
		}
	}
	var err error
	if op.Inputs, err = decodeSlots(where, "input", jo.Inputs); err != nil {
		return nil, err
	}
	if op.Outputs, err = decodeSlots(where, "output", jo.Outputs); err != nil {
		return nil, err
	}
	if op.Attrs, err = decodeAttrs(where, jo.Attrs); err != nil {
		return nil, err
	}
	if jd := jo.Dist; jd != nil {
		d := &OpDist{Mesh: jd.Mesh, ImplType: jd.ImplType, ImplIndex: jd.ImplIndex, Recompute: jd.Recompute}
		if d.Inputs, err = decodeArgDists(where, "input", jd.Inputs); err != nil {
			return nil, err
		}
		if d.Outputs, err = decodeArgDists(where, "output", jd.Outputs); err != nil {
			return nil, err
		}
		op.Dist = d
	}
	return op, nil
}

func decodeSlots(where, what string, js []*jsonSlot) ([]Slot, error) {
	if js == nil {
		return nil, nil
	}
	out := make([]Slot, len(js))
	for i, s := range js {
		if s == nil {
			return nil, fmt.Errorf("%s: %s slot at position %d is null", where, what, i)
		}
		out[i] = Slot{Name: s.Name, Args: s.Args}
		if out[i].Args == nil {
			out[i].Args = []string{}
		}
	}
	return out, nil
}

func decodeArgDists(where, what string, js []*jsonArgDist) ([]ArgDist, error) {
	if js == nil {
		return nil, nil
	}
	out := make([]ArgDist, len(js))
	for i, a := range js {
		if a == nil {
			return nil, fmt.Errorf("%s: %s dist at position %d is null", where, what, i)
		}
		out[i] = ArgDist{Name: a.Name, DimsMapping: a.DimsMapping}
		if out[i].DimsMapping == nil {
			out[i].DimsMapping = []int{}
		}
	}
	return out, nil
}

func decodeAttrs(where string, js []*jsonAttr) (Attrs, error) {
	var as Attrs
	for i, ja := range js {
		if ja == nil {
			return nil, fmt.Errorf("%s: attr at position %d is null", where, i)
		}
		awhere := fmt.Sprintf("%s attr %q", where, ja.Name)
		if as.Has(ja.Name) {
			return nil, fmt.Errorf("%s: given twice", awhere)
		}
		v, err := decodeValue(ja.Kind, ja.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", awhere, err)
		}
		as.Set(ja.Name, v)
	}
	return as, nil
}

// decodeValue converts a decoded JSON value to a Value of the named kind.
func decodeValue(kind string, x any) (Value, error) {
	if kind == "" {
		return nil, errors.New("missing kind")
	}
	var k AttrKind
	for k = 0; int(k) < len(attrKindNames); k++ {
		if attrKindNames[k] == kind {
			break
		}
	}
	if int(k) == len(attrKindNames) {
		return nil, fmt.Errorf("unknown kind %q", kind)
	}
	if x == nil {
		return nil, errors.New("missing value")
	}
	switch k {
	case KindBool:
		b, err := jsonBool(x)
		return Bool(b), err
	case KindInt:
		i, err := jsonInt(x, 64)
		return Int(i), err
	case KindFloat:
		f, err := jsonNumber(x)
		return Float(f), err
	case KindString:
		s, err := jsonString(x)
		return String(s), err
	case KindBlock:
		i, err := jsonInt(x, strconv.IntSize)
		return BlockRef(i), err
	case KindLong:
		i, err := jsonInt(x, 64)
		return Long(i), err
	case KindFloat64:
		f, err := jsonNumber(x)
		return Float64(f), err
	case KindVarRef:
		s, err := jsonString(x)
		return VarRef(s), err
	case KindScalar:
		return decodeScalar(x)
	}
	xs, ok := x.([]any)
	if !ok {
		return nil, fmt.Errorf("want array, got %s", jsonKind(x))
	}
	switch k {
	case KindBools:
		return decodeList[Bools](xs, jsonBool)
	case KindInts:
		return decodeList[Ints](xs, func(e any) (int64, error) { return jsonInt(e, 64) })
	case KindFloats:
		return decodeList[Floats](xs, jsonNumber)
	case KindStrings:
		return decodeList[Strings](xs, jsonString)
	case KindLongs:
		return decodeList[Longs](xs, func(e any) (int64, error) { return jsonInt(e, 64) })
	case KindFloat64s:
		return decodeList[Float64s](xs, jsonNumber)
	case KindVarRefs:
		return decodeList[VarRefs](xs, jsonString)
	case KindScalars:
		return decodeList[Scalars](xs, decodeScalar)
	default: // KindBlocks
		return decodeList[BlockRefs](xs, func(e any) (int, error) {
			n, err := jsonInt(e, strconv.IntSize)
			return int(n), err
		})
	}
}

// decodeList decodes each element of xs with one, naming the first
// element that fails.
func decodeList[L ~[]E, E any](xs []any, one func(any) (E, error)) (Value, error) {
	out := make(L, len(xs))
	for i, x := range xs {
		e, err := one(x)
		if err != nil {
			return nil, fmt.Errorf("element %d: %v", i, err)
		}
		out[i] = e
	}
	return any(out).(Value), nil
}

// decodeScalar reads the one-member object encodeScalar writes.
func decodeScalar(x any) (Scalar, error) {
	obj, ok := x.(map[string]any)
	if !ok || len(obj) != 1 {
		return Scalar{}, fmt.Errorf(`want a scalar object such as {"long": 3}, got %s`, jsonKind(x))
	}
	for k, v := range obj {
		switch k {
		case "bool":
			b, err := jsonBool(v)
			return BoolScalar(b), err
		case "long":
			i, err := jsonInt(v, 64)
			return LongScalar(i), err
		case "float64":
			f, err := jsonNumber(v)
			return Float64Scalar(f), err
		case "complex":
			xs, ok := v.([]any)
			if !ok || len(xs) != 2 {
				return Scalar{}, fmt.Errorf("complex: want [re, im], got %s", jsonKind(v))
			}
			re, err := jsonNumber(xs[0])
			if err != nil {
				return Scalar{}, err
			}
			im, err := jsonNumber(xs[1])
			return ComplexScalar(re, im), err
		}
		return Scalar{}, fmt.Errorf("unknown scalar type %q", k)
	}
	return Scalar{}, errors.New("empty scalar object")
}

// jsonKind names the JSON type of a decoded value, for messages.
func jsonKind(x any) string {
	switch x := x.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number " + string(x)
	case string:
		return "string " + strconv.Quote(x)
	case []any:
		return "array"
	}
	return "object"
}

func jsonBool(x any) (bool, error) {
	b, ok := x.(bool)
	if !ok {
		return false, fmt.Errorf("want boolean, got %s", jsonKind(x))
	}
	return b, nil
}

func jsonString(x any) (string, error) {
	s, ok := x.(string)
	if !ok {
		return "", fmt.Errorf("want string, got %s", jsonKind(x))
	}
	return s, nil
}

func jsonInt(x any, bits int) (int64, error) {
	n, ok := x.(json.Number)
	if !ok {
		return 0, fmt.Errorf("want integer, got %s", jsonKind(x))
	}
	i, err := strconv.ParseInt(string(n), 10, bits)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("integer %s out of range", n)
		}
		return 0, fmt.Errorf("want integer, got %s", jsonKind(x))
	}
	return i, nil
}

func jsonNumber(x any) (float64, error) {
	switch x := x.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return 0, fmt.Errorf("number %s out of range", x)
		}
		return f, nil
	case string:
		switch x {
		case "nan":
			return math.NaN(), nil
		case "inf":
			return math.Inf(1), nil
		case "-inf":
			return math.Inf(-1), nil
		}
	}
	return 0, fmt.Errorf(`want number, "nan", "inf" or "-inf", got %s`, jsonKind(x))
}

// indentJSON lays out the compact JSON src (as encoding/json writes it,
// ending in a newline) with two-space indentation, keeping every array or
// object below the top level that contains no object on one line.
func indentJSON(src []byte) []byte {
	src = bytes.TrimRight(src, "\n")
	out := make([]byte, 0, len(src)+len(src)/2)
	depth := 0
	newline := func() {
		out = append(out, '\n')
		for range depth {
			out = append(out, ' ', ' ')
		}
	}
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '"':
			j := stringEnd(src, i)
			out = append(out, src[i:j]...)
			i = j - 1
		case '{', '[':
			if end, flat := flatEnd(src, i); flat && depth > 0 {
				out = appendInline(out, src[i:end])
				i = end - 1
				continue
			}
			out = append(out, c)
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			out = append(out, c)
		case ',':
			out = append(out, c)
			newline()
		case ':':
			out = append(out, ':', ' ')
		default:
			out = append(out, c)
		}
	}
	return append(out, '\n')
}

// stringEnd returns the index just past the string literal starting at i.
func stringEnd(src []byte, i int) int {
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(src)
}

// flatEnd returns the index just past the list or object starting at i,
// and whether it contains no object.
func flatEnd(src []byte, i int) (int, bool) {
	depth := 0
	for j := i; j < len(src); j++ {
		switch src[j] {
		case '"':
			j = stringEnd(src, j) - 1
		case '{':
			if j > i {
				return 0, false
			}
			depth++
		case '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1, true
			}
		}
	}
	return 0, false
}

// appendInline appends the compact JSON s with a space after each comma
// and colon.
func appendInline(out, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			j := stringEnd(s, i)
			out = append(out, s[i:j]...)
			i = j - 1
		case ',', ':':
			out = append(out, c, ' ')
		default:
			out = append(out, c)
		}
	}
	return out
}
