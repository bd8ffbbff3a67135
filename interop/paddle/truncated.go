package paddle

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// A file cut short is told as such: the innermost field being read when
// the file ended, its number and name, where it starts, and that the file
// is truncated (rather than that some outer field is malformed, which is
// what protowire's lengths say of it). Each takes a message that runs to
// the end of the file as possibly truncated: a field whose value the file
// ends inside is read as far as the file goes, so that the field inside
// it that the file ends in is found and named.

// fieldNames spells the fields of each message kind, by the first word of
// the last part of a message's path in errors.
var fieldNames = map[string]map[protowire.Number]string{
	"ProgramDesc":     {progBlocks: "blocks", progLegacyCompat: "legacy op_compatible_map", progVersion: "version", progOpVersionMap: "op_version_map"},
	"Version":         {versionVersion: "version"},
	"OpVersionMap":    {opVersionMapPair: "pair"},
	"OpVersionPair":   {opVersionPairName: "op_name", opVersionPairVer: "op_version"},
	"OpVersion":       {opVersionVersion: "version"},
	"BlockDesc":       {blockIdx: "idx", blockParent: "parent_idx", blockVars: "vars", blockOps: "ops", blockForward: "forward_block_idx"},
	"VarDesc":         {varName: "name", varType: "type", varPersistable: "persistable", varNeedCheckFeed: "need_check_feed", varIsParameter: "is_parameter", varStopGradient: "stop_gradient", varAttrs: "attrs"},
	"var Attr":        {varAttrName: "name", varAttrType: "type", varAttrI: "i", varAttrS: "s", varAttrInts: "ints"},
	"VarType":         {vtType: "type", vtSelectedRow: "selected_rows", vtDense: "dense_tensor", vtArray: "tensor_array", vtReader: "reader", vtTuple: "tuple", vtString: "string", vtStrings: "strings", vtVocab: "vocab", vtSparseCOO: "sparse_coo", vtSparseCSR: "sparse_csr"},
	"DenseTensorDesc": {dtdTensor: "tensor", dtdLoD: "lod_level"},
	"TensorDesc":      {tdDataType: "data_type", tdDims: "dims"},
	"reader":          {readerTensors: "dense_tensor"},
	"tuple":           {tupleElems: "element_type"},
	"OpDesc":          {opInputs: "inputs", opOutputs: "outputs", opType: "type", opAttrs: "attrs", opIsTarget: "is_target"},
	"Var":             {slotName: "parameter", slotArgs: "arguments"},
	"Scalar":          {scalarType: "type", scalarB: "b", scalarI: "i", scalarR: "r", scalarC: "c"},
	"Complex":         {complexR: "r", complexI: "i"},
}

// fieldName names field num of the message that msg (a path in errors,
// "BlockDesc 0 > OpDesc 3 "relu" > Attr "x"") ends in, or "".
func fieldName(msg string, num protowire.Number) string {
	parts := strings.Split(msg, " > ")
	last := parts[len(parts)-1]
	kind, _, _ := strings.Cut(last, " ")
	switch {
	case kind == "Attr" && len(parts) > 1 && strings.HasPrefix(parts[len(parts)-2], "VarDesc"):
		kind = "var Attr"
	case kind == "Attr":
		if n, ok := attrFieldNames[int(num)]; ok {
			return n
		}
		return ""
	case strings.HasPrefix(kind, "inputs[") || strings.HasPrefix(kind, "outputs["):
		kind = "Var"
	case kind == "dense_tensor" || kind == "tensor_array":
		kind = "DenseTensorDesc"
	case kind == "scalar" || kind == "scalars":
		kind = "Scalar"
	case kind == "c":
		kind = "Complex"
	case kind != "reader" && kind != "tuple" && slices.Contains(slices.Collect(maps.Values(descFieldNames)), kind):
		kind = "TensorDesc" // selected_rows and the other descs
	}
	return fieldNames[kind][num]
}

// spell is "field N" or "field N (name)".
func spell(msg string, num protowire.Number) string {
	s := "field " + strconv.Itoa(int(num))
	if n := fieldName(msg, num); n != "" {
		s += " (" + n + ")"
	}
	return s
}

// truncErr records a truncation at the field starting at off: the first
// one made while no deeper one is known is the innermost, which the
// decoder reports.
func (d *decoder) truncErr(off int, format string, args ...any) error {
	err := d.errf(off, format, args...)
	if d.cut == nil {
		d.cut = err
	}
	return d.cut
}

// within reads a truncated field's partial value with fn, to find the
// field inside it that the file ends in; it returns the innermost
// truncation found, cut (this field's) when fn finds none deeper.
func (d *decoder) within(cut error, fn func()) error {
	d.cut = nil
	fn()
	if d.cut == nil {
		d.cut = cut
	}
	return d.cut
}
