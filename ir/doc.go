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
//	module    = [ "module" name ] { mesh | group | program | grads } .
//	mesh      = "mesh" name "shape" ints "dims" names "ranks" ints .
//	group     = "group" int "ranks" ints .
//	program   = "program" ( "main" | "startup" ) [ "rank" int ] "{" block { block } "}" .
//	block     = "block" int [ "parent" int ] [ "forward" int ] "{" { var | op } "}" .
//	var       = ( "var" | "persist" | "param" ) name ":" type [ tdist ] [ varattrs ] .
//	type      = dtype "[" [ int { "," int } ] "]"
//	          | "reader" | "step_scopes" | "tensor_array" | "feed_list" | "fetch_list" | "raw" .
//	dtype     = "bool" | "u8" | "i8" | "i16" | "i32" | "i64" | "f16" | "bf16" | "f32" | "f64" .
//	tdist     = "@" name ints [ "partial" "[" pdim { "," pdim } "]" ] .
//	pdim      = int [ ":" ( "sum" | "avg" | "max" | "min" ) ] .
//	varattrs  = "{" [ varattr { "," varattr } ] "}" .
//	varattr   = flag | name "=" value .
//	flag      = "is_data" | "need_check_feed" | "need_clip" | "stop_gradient" | "trainable" .
//	op        = "op" int name slots "->" slots [ attrs ] [ "role" role ] [ "fwd" int ] [ opdist ] .
//	slots     = "(" [ slot { "," slot } ] ")" .
//	slot      = name ":" ( name | names ) .
//	attrs     = "{" [ name "=" value { "," name "=" value } ] "}" .
//	role      = rolename { "|" rolename } .
//	rolename  = "forward" | "backward" | "optimize" | "rpc" | "dist" | "lrsched" | "loss" .
//	opdist    = "dist" "@" name [ "impl" name ":" int ] [ "recompute" ]
//	            "[" [ argdist { "," argdist } ] "->" [ argdist { "," argdist } ] "]" .
//	argdist   = name ":" ints .
//	grads     = "grads" name "->" ( name | "[" "]" ) .
//	value     = "true" | "false" | int | float | string | "^" int | list
//	          | "ints[]" | "floats[]" | "bools[]" | "strings[]" | "blocks[]" .
//	list      = "[" [ value { "," value } ] "]" .   (one kind of element; "[]" is an empty ints)
//	ints      = "[" [ int { "," int } ] "]" .
//	names     = "[" [ name { "," name } ] "]" .
//
// A name is [A-Za-z_][A-Za-z0-9_.@]* or a Go-quoted string; keywords are
// ordinary names outside the positions above, so a var may be called
// "op". An int is an optional "-" and decimal digits. A float has a "." or
// an exponent ("1.0", "-0.1", "1e-05") or is "nan", "inf", "-inf"; the
// printer writes the shortest form that re-parses to the same float64. A
// string is Go-quoted. Attributes are written (and kept) sorted by name;
// "^1" refers to block 1. A role omitted is forward; "forward|loss" is the
// loss bit alone. Block indices must run 0, 1, 2... in order.
//
// Positions in errors are "name:line:col" with 1-based lines and byte
// columns.
package ir
