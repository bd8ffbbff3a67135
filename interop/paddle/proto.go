package paddle

import (
	"strconv"

	"github.com/distpass/distpass/ir"
)

// Field numbers of framework.proto (package paddle.framework.proto), as
// facts: see doc.go for where each lands in the IR.
const (
	// ProgramDesc
	progBlocks        = 1
	progLegacyCompat  = 3 // reserved now; was OpCompatibleMap op_compatible_map
	progVersion       = 4
	progOpVersionMap  = 5
	versionVersion    = 1
	opVersionMapPair  = 1
	opVersionPairName = 1
	opVersionPairVer  = 2
	opVersionVersion  = 1

	// BlockDesc
	blockIdx     = 1
	blockParent  = 2
	blockVars    = 3
	blockOps     = 4
	blockForward = 5

	// VarDesc
	varName          = 1
	varType          = 2
	varPersistable   = 3
	varNeedCheckFeed = 4
	varIsParameter   = 5
	varStopGradient  = 6
	varAttrs         = 7
	varAttrName      = 1
	varAttrType      = 2
	varAttrI         = 3
	varAttrS         = 4
	varAttrInts      = 5

	// VarType
	vtType        = 1
	vtSelectedRow = 2
	vtDense       = 3
	vtArray       = 4
	vtReader      = 5
	vtTuple       = 7
	vtString      = 8
	vtStrings     = 9
	vtVocab       = 10
	vtSparseCOO   = 11
	vtSparseCSR   = 12
	tdDataType    = 1
	tdDims        = 2
	dtdTensor     = 1
	dtdLoD        = 2
	readerTensors = 1
	tupleElems    = 1

	// OpDesc
	opInputs   = 1
	opOutputs  = 2
	opType     = 3
	opAttrs    = 4
	opIsTarget = 5
	slotName   = 1
	slotArgs   = 2

	// OpDesc.Attr
	attrName     = 1
	attrType     = 2
	attrI        = 3
	attrF        = 4
	attrS        = 5
	attrInts     = 6
	attrFloats   = 7
	attrStrings  = 8
	attrB        = 10
	attrBools    = 11
	attrBlock    = 12
	attrL        = 13
	attrBlocks   = 14
	attrLongs    = 15
	attrFloat64s = 16
	attrVar      = 17
	attrVars     = 18
	attrFloat64  = 19
	attrScalar   = 20
	attrScalars  = 21

	// Scalar
	scalarType = 1
	scalarB    = 2
	scalarI    = 3
	scalarR    = 4
	scalarC    = 5
	complexR   = 1
	complexI   = 2
)

// AttrType values.
const (
	atINT      = 0
	atFLOAT    = 1
	atSTRING   = 2
	atINTS     = 3
	atFLOATS   = 4
	atSTRINGS  = 5
	atBOOLEAN  = 6
	atBOOLEANS = 7
	atBLOCK    = 8
	atLONG     = 9
	atBLOCKS   = 10
	atLONGS    = 11
	atFLOAT64S = 12
	atVAR      = 13
	atVARS     = 14
	atFLOAT64  = 15
	atSCALAR   = 16
	atSCALARS  = 17

	numAttrTypes = 18
)

var attrTypeNames = [numAttrTypes]string{"INT", "FLOAT", "STRING", "INTS", "FLOATS", "STRINGS", "BOOLEAN", "BOOLEANS",
	"BLOCK", "LONG", "BLOCKS", "LONGS", "FLOAT64S", "VAR", "VARS", "FLOAT64", "SCALAR", "SCALARS"}

func attrTypeName(t int32) string {
	if t >= 0 && t < numAttrTypes {
		return attrTypeNames[t]
	}
	return strconv.Itoa(int(t))
}

// attrValueField is the OpDesc.Attr field that holds a value of each
// AttrType.
var attrValueField = [numAttrTypes]int{
	atINT: attrI, atFLOAT: attrF, atSTRING: attrS, atINTS: attrInts, atFLOATS: attrFloats, atSTRINGS: attrStrings,
	atBOOLEAN: attrB, atBOOLEANS: attrBools, atBLOCK: attrBlock, atLONG: attrL, atBLOCKS: attrBlocks, atLONGS: attrLongs,
	atFLOAT64S: attrFloat64s, atVAR: attrVar, atVARS: attrVars, atFLOAT64: attrFloat64, atSCALAR: attrScalar, atSCALARS: attrScalars,
}

// attrFieldNames spells the OpDesc.Attr fields in messages.
var attrFieldNames = map[int]string{
	attrName: "name", attrType: "type", attrI: "i", attrF: "f", attrS: "s", attrInts: "ints", attrFloats: "floats",
	attrStrings: "strings", attrB: "b", attrBools: "bools", attrBlock: "block_idx", attrL: "l", attrBlocks: "blocks_idx",
	attrLongs: "longs", attrFloat64s: "float64s", attrVar: "var_name", attrVars: "vars_name", attrFloat64: "float64",
	attrScalar: "scalar", attrScalars: "scalars",
}

// VarType.Type values that are variable kinds.
const (
	vtDENSE_TENSOR       = 7
	vtSELECTED_ROWS      = 8
	vtFEED_MINIBATCH     = 9
	vtFETCH_LIST         = 10
	vtSTEP_SCOPES        = 11
	vtLOD_RANK_TABLE     = 12
	vtDENSE_TENSOR_ARRAY = 13
	vtPLACE_LIST         = 14
	vtREADER             = 15
	vtFETCH_VAR_LIST     = 16
	vtRAW                = 17
	vtTUPLE              = 18
	vtSTRING             = 25
	vtSTRINGS            = 26
	vtVOCAB              = 27
	vtFEED_LIST          = 28
	vtPSTRING            = 29
	vtSPARSE_COO         = 30
	vtSPARSE_CSR         = 31
)

// kindCodes maps each IR type kind to its VarType.Type, and descField to
// the VarType field that describes it (0: none).
var kindCodes = map[ir.TypeKind]struct {
	code, desc int32
}{
	ir.DenseTensor:  {vtDENSE_TENSOR, vtDense},
	ir.SelectedRows: {vtSELECTED_ROWS, vtSelectedRow},
	ir.FeedList:     {vtFEED_MINIBATCH, 0},
	ir.FetchList:    {vtFETCH_LIST, 0},
	ir.StepScopes:   {vtSTEP_SCOPES, 0},
	ir.LoDRankTable: {vtLOD_RANK_TABLE, 0},
	ir.TensorArray:  {vtDENSE_TENSOR_ARRAY, vtArray},
	ir.PlaceList:    {vtPLACE_LIST, 0},
	ir.Reader:       {vtREADER, vtReader},
	ir.FetchVarList: {vtFETCH_VAR_LIST, 0},
	ir.Raw:          {vtRAW, 0},
	ir.Tuple:        {vtTUPLE, vtTuple},
	ir.StringKind:   {vtSTRING, vtString},
	ir.StringsKind:  {vtSTRINGS, vtStrings},
	ir.Vocab:        {vtVOCAB, vtVocab},
	ir.FeedVarList:  {vtFEED_LIST, 0},
	ir.PString:      {vtPSTRING, 0},
	ir.SparseCOO:    {vtSPARSE_COO, vtSparseCOO},
	ir.SparseCSR:    {vtSPARSE_CSR, vtSparseCSR},
}

// codeKinds is kindCodes inverted.
var codeKinds = func() map[int32]ir.TypeKind {
	m := make(map[int32]ir.TypeKind, len(kindCodes))
	for k, c := range kindCodes {
		m[c.code] = k
	}
	return m
}()

// varTypeNames spells VarType.Type values in messages.
var varTypeNames = map[int32]string{
	0: "BOOL", 1: "INT16", 2: "INT32", 3: "INT64", 4: "FP16", 5: "FP32", 6: "FP64",
	7: "DENSE_TENSOR", 8: "SELECTED_ROWS", 9: "FEED_MINIBATCH", 10: "FETCH_LIST", 11: "STEP_SCOPES",
	12: "LOD_RANK_TABLE", 13: "DENSE_TENSOR_ARRAY", 14: "PLACE_LIST", 15: "READER", 16: "FETCH_VAR_LIST",
	17: "RAW", 18: "TUPLE", 19: "SIZE_T", 20: "UINT8", 21: "INT8", 22: "BF16", 23: "COMPLEX64",
	24: "COMPLEX128", 25: "STRING", 26: "STRINGS", 27: "VOCAB", 28: "FEED_LIST", 29: "PSTRING",
	30: "SPARSE_COO", 31: "SPARSE_CSR", 32: "FP8_E4M3FN", 33: "FP8_E5M2", 37: "UINT32", 38: "UINT64",
}

func varTypeName(c int32) string {
	if n, ok := varTypeNames[c]; ok {
		return n
	}
	return strconv.Itoa(int(c))
}

// descFieldNames spells the VarType desc fields.
var descFieldNames = map[int32]string{
	vtSelectedRow: "selected_rows", vtDense: "dense_tensor", vtArray: "tensor_array", vtReader: "reader",
	vtTuple: "tuple", vtString: "string", vtStrings: "strings", vtVocab: "vocab", vtSparseCOO: "sparse_coo",
	vtSparseCSR: "sparse_csr",
}
