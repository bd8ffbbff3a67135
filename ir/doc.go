// Package ir is distpass's intermediate representation: modules of
// programs, blocks, vars and ops annotated with distributions over named
// process meshes, and its text format (.dpir).
//
// A Module holds named ProcessMeshes, a main and an optional startup
// Program, the params-grads list and the process-group table. A Program is
// a list of Blocks (block 0 is global); a Block an ordered var table and an
// ordered op list. Vars carry a Type and an optional TensorDist; ops carry
// ordered input and output slots, sorted attributes, a Role with Paddle's
// bit values, the id of their forward op (Fwd) and an optional OpDist.
// Build modules with Builder, copy them with Module.Clone, compare them
// with Equal (the go-cmp options are CmpOptions), check them with Verify.
//
// # Text format
//
// Print writes the canonical text; Parse reads it. Parse(Print(m)) is Equal
// to m and printing it again gives the same bytes. Newlines are white
// space: statements are one per line only by the printer's convention, and
// an op may wrap anywhere. # starts a comment that runs to the end of the
// line. The grammar, in EBNF (terminals quoted, names and numbers below):
//
//	module    = [ "module" name ] { mattr | mesh | group | program | grads } .
//	mattr     = "attr" name "=" value .
//	mesh      = "mesh" name "shape" ints "dims" names "ranks" ints .
//	group     = "group" int "ranks" ints .
//	program   = "program" ( "main" | "startup" ) [ "rank" int ] "{" block { block } "}" .
//	block     = "block" int [ "parent" int ] [ "forward" int ] "{" { var | op } "}" .
//	var       = ( "var" | "persist" | "param" ) name ":" type [ tdist ] [ varattrs ] .
//	type      = tensor | kind [ "(" [ elem { "," elem } ] ")" ] .
//	tensor    = dtype "[" [ int { "," int } ] "]" [ "lod" int ] .
//	kind      = "reader" | "step_scopes" | "tensor_array" | "feed_list" | "fetch_list" | "raw"
//	          | "selected_rows" | "lod_rank_table" | "place_list" | "tuple" | "string" | "strings"
//	          | "vocab" | "feed_var_list" | "pstring" | "sparse_coo" | "sparse_csr" | "fetch_var_list" .
//	elem      = tensor | dtype | kind | "tensor" .   (a tuple's elements: dtypes or kinds; others': tensors)
//	dtype     = "bool" | "u8" | "i8" | "i16" | "i32" | "i64" | "f16" | "bf16" | "f32" | "f64" .
//	tdist     = "@" name ints [ "partial" "[" pdim { "," pdim } "]" ] [ "local" ints ] .
//	pdim      = int [ ":" ( "sum" | "avg" | "max" | "min" ) ] .
//	varattrs  = "{" [ varattr { "," varattr } ] "}" .
//	varattr   = flag | name "=" value .
//	flag      = "is_data" | "need_check_feed" | "need_clip" | "stop_gradient" | "trainable" .
//	op        = "op" int name slots "->" slots [ attrs ] [ "role" role ] [ "fwd" int ] [ opdist ] .
//	slots     = "(" [ slot { "," slot } ] ")" .
//	slot      = name ":" ( name | names ) .
//	attrs     = "{" [ name "=" value { "," name "=" value } ] "}" .
//	role      = ( rolename | hexint ) { "|" ( rolename | hexint ) } .
//	rolename  = "forward" | "backward" | "optimize" | "rpc" | "dist" | "lrsched" | "loss" .
//	opdist    = "dist" "@" name [ "impl" name ":" int ] [ "recompute" ]
//	            "[" [ argdist { "," argdist } ] "->" [ argdist { "," argdist } ] "]" .
//	argdist   = name ":" ints .
//	grads     = "grads" name "->" ( name | "[" "]" ) .
//	value     = "true" | "false" | int | float | string | "^" int | list
//	          | "ints[]" | "floats[]" | "bools[]" | "strings[]" | "blocks[]"
//	          | "long" "(" int ")" | "longs" ints
//	          | "float64" "(" number ")" | "float64s" "[" [ number { "," number } ] "]"
//	          | "var" "(" name ")" | "vars" names
//	          | "scalar" "(" scalar ")" | "scalars" "[" [ scalar { "," scalar } ] "]" .
//	list      = "[" [ value { "," value } ] "]" .   (one kind of element; "[]" is an empty ints)
//	number    = int | float .
//	scalar    = "true" | "false" | int | float | "complex" "(" number "," number ")" .
//	ints      = "[" [ int { "," int } ] "]" .
//	names     = "[" [ name { "," name } ] "]" .
//
// A name is [A-Za-z_][A-Za-z0-9_.@]* or a Go-quoted string; keywords are
// ordinary names outside the positions above, so a var may be called
// "op". An int is an optional "-" and decimal digits, or an optional "-",
// "0x" and hex digits ("-0x10" is -16; a hexint, in a role, has no "-";
// the printer writes hex only for role bits that have no name,
// "backward|0x1000"). A float has a "." or an exponent ("1.0", "-0.1",
// "1e-05") or is "nan", "inf", "-inf". A number ends where a name could
// not go on: "0x", "1x2", "1e" and "0b1" are malformed numbers, errors at
// their first byte, not a number followed by a name. The printer writes the
// shortest form that re-parses to the same float64, so a float that came
// from a float32 also comes back with the same float32 bits. A string is
// Go-quoted. Attributes are written (and kept) sorted by name, whatever
// order the text gives them in: the order is no fact of a program, so
// printing is canonical and Hash and Equal do not depend on how an op was
// built. A format whose files do order attributes (Paddle's does) keeps
// that order as an attribute of its own (interop/paddle's
// paddle.attr_order). "^1" refers to block 1. A role omitted is forward;
// "forward|loss" is the loss bit alone. Block indices must run 0, 1, 2...
// in order. Blocks nest at most MaxBlockDepth (1000) deep, by parents or
// by block refs: a program nested deeper is an error at the block or op
// that passes the limit (CheckNesting), so that no later walk over it
// costs its depth per name or needs a deep stack. Indices, ranks, mesh
// sizes, group ids, mappings, lod levels and impl indexes are 32-bit
// integers; a mesh holds at most MaxMeshRanks processes, with ranks from
// 0 to MaxRank (Verify's limits).
//
// The attribute values past the first line of value are the types Paddle
// tells apart from int and float, so that an imported program exports as
// it came: long(5) and longs[1, 2] are 64-bit integers (Paddle's LONG and
// LONGS, where a bare 5 is its 32-bit INT); float64(0.5) and float64s[...]
// are doubles (FLOAT64, where a bare 0.5 is a FLOAT, a float32); var(x)
// and vars[x, y] name vars (VAR, VARS), which must resolve from the op's
// block; scalar(true), scalar(3), scalar(0.5) and
// scalar(complex(1.0, -2.0)) are Paddle's typed SCALARs, scalars[...] a
// list of them. Module attrs ("attr paddle.version = long(2002002)") hold
// facts an importer keeps for its exporter. A tensor's "lod N" is the LoD
// level a Paddle program declares for it; a no-shape kind's elements are
// what the kind describes: tensor_array(f32[-1, 16] lod 1) is an array of
// such tensors, reader(...) lists the tensors a reader yields,
// tuple(f32, tensor_array) the element types of a tuple.
//
// A tensor dist's mapping says how the serial tensor is split; its "partial
// [...]" which mesh dims hold parts of a sum (or avg, max, min) pending;
// its "local [...]" (TensorDist.Local) the mesh dims along which the
// tensor's values are rank-local: integers that index each rank's own rows
// of a tensor split along that mesh dim, numbered from that rank's own
// data, not the serial tensor's rows (MoE's dispatch positions: var pos :
// i64[16] @world[-1] local [0]). Partial and local dims are written
// ascending, each once; Verify also holds local dims to the mesh's range
// and to integer tensors. The printer writes either only when it is
// not empty.
//
// Positions in errors are "name:line:col" with 1-based lines and byte
// columns.
package ir
