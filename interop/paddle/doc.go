// Package paddle reads and writes PaddlePaddle program files: the
// ProgramDesc protobuf of .pdmodel and __model__ files, as ir modules.
//
// Import decodes a file into a module whose main program is the file's
// program; Export encodes a module's main program back. For a module that
// Import made, Export gives the file's bytes back exactly, and the module
// holds everything needed for that, so its .dpir text parses back to a
// module that exports to the same bytes too. The codec is written over the
// protobuf wire format (google.golang.org/protobuf's protowire), from the
// field numbers of framework.proto; no generated code. It accepts packed
// and unpacked repeated fields, sign-extended int32 varints and missing
// required fields (read as proto2 reads them), and rejects, naming the
// message, the field and the byte offset, any field or enum value it does
// not know: "model.pdmodel: BlockDesc 0 > OpDesc 3 "relu" > Attr "x":
// unknown field 9 (varint) at byte offset 1234".
//
// # Where each part of a ProgramDesc goes
//
//   - blocks: the program's blocks, with parent_idx as Parent and
//     forward_block_idx as Forward (-1 when absent). A block's idx must be
//     its position.
//   - VarDesc: a var. persistable and is_parameter give its kind (var,
//     persist, param); need_check_feed and stop_gradient its flags. The
//     VarType gives its type: a DENSE_TENSOR is a dense tensor of the
//     TensorDesc's dtype and dims (-1 kept), with "lod N" when the file
//     declares a lod_level; the other kinds are the IR's no-shape kinds
//     (FEED_MINIBATCH is feed_list, FETCH_LIST fetch_list, FEED_LIST
//     feed_var_list, the rest by their lower-case names), and what their
//     desc carries becomes the type's elements: tensor_array(f32[-1] lod 1),
//     selected_rows(f32[100, 8]), reader(...), tuple(f32, i64). VarDesc
//     attrs (INT, STRING, INTS) are var attrs.
//   - OpDesc: an op with its type, input and output slots in file order
//     (empty slots kept) and its attrs. Op ids are 1, 2, ... in program
//     order. AttrTypes map to values: INT Int, FLOAT Float (a float32, re-encoded
//     to the same bits), STRING String, INTS Ints, FLOATS Floats, STRINGS
//     Strings, BOOLEAN Bool, BOOLEANS Bools, BLOCK BlockRef, BLOCKS
//     BlockRefs, LONG Long, LONGS Longs, FLOAT64 Float64, FLOAT64S
//     Float64s, VAR VarRef, VARS VarRefs, SCALAR Scalar, SCALARS Scalars.
//     op_role becomes the op's Role, every bit kept; op_role_var,
//     op_namescope, op_callstack, op_device and with_quant_attr stay
//     attrs.
//   - version, op_version_map and the legacy field 3 (OpCompatibleMap of
//     Paddle ~1.6, kept as opaque bytes) become module attrs.
//
// What the IR has no field for is kept in attrs whose names start with
// "paddle.", a prefix no Paddle attr uses:
//
//   - module: paddle.version (long), paddle.op_version_names (strings) and
//     paddle.op_versions (ints), paddle.op_compatible_map (the legacy field
//     3, base64); the same fields of a startup program's file as
//     paddle.startup.version and so on.
//   - op and var: paddle.attr_order (strings), the attrs' names in file
//     order, an op's op_role among them, when that is not the default
//     order: names sorted and, for an op, op_role present. An op's list
//     without op_role says the op had none (Export still writes one, by
//     name, for a role that is not 0).
//   - op: paddle.is_target, OpDesc.is_target when the file has it.
//   - var: paddle.fields, the optional VarDesc bools the file wrote, when
//     not the usual ones (persistable always, the others when true).
//
// The IR keeps attrs sorted by name (its invariant: printing is canonical,
// and ir.Hash and ir.Equal do not depend on how an op was built), so the
// order of a file's attrs is a fact of the file like the others, kept as
// paddle.attr_order. Export writes the attrs in that order when an op or
// var has one (names it lists that the op no longer has are skipped, and
// attrs it does not list follow by name); otherwise sorted by name, with
// op_role among them, which is what recent Paddle writes: such files
// import with no paddle.attr_order, while those of Paddle 2.2 and older,
// which wrote attrs in hash-map order, import with one on nearly every op.
// One list covers op_role too: its place in the file, or its absence
// (files of 2018 have none), is part of the order.
//
// # Startup program
//
// Paddle saves a training program as two ProgramDescs, the main program
// and the startup program that initialises the params. ExportFiles with
// ExportOptions.Startup writes a module's startup program as that second
// file, and ImportFiles reads the pair (and a sidecar) back. Without it,
// the startup program is one of the things the main ProgramDesc cannot
// hold, which only a sidecar carries (base64).
//
// # Sidecar
//
// The proto cannot hold distpass's annotations: tensor and op dists, fwd,
// op ids other than 1, 2, ..., the process-group table, meshes,
// params-grads, the startup program (but as a file of its own), a
// partitioned program's rank, the var flags is_data, need_clip and
// trainable, and attr values the proto would round (a Float that is no
// float32). Export fails naming the first such thing, unless
// ExportOptions.Drop says to lose them; ExportWithSidecar (or ExportFiles
// with ExportOptions.Sidecar) writes them to a small versioned JSON
// document beside the ProgramDesc, keyed by block index and var name and
// by block index and op position, and ImportWithSidecar (ImportFiles)
// reads the files back into an equal module. The sidecar also keeps the
// exact attrs of an op or var whose paddle.attr_order or paddle.fields a
// pass left stale (a grad op given its forward op's order), which a
// ProgramDesc writes right but imports back otherwise; that alone is no
// error. The sidecar's schema is in sidecar.go.
//
// The sidecar only adds to its ProgramDescs: what it says of an op or var
// that a ProgramDesc holds too (an attr's value, is_target, a file's
// version) must be what the file holds, or ImportFiles fails naming the
// op or var, both values and both files; two entries for one var or op,
// and ranks, group ids or mappings the text format cannot hold (beyond
// 32 bits), are refused too. A startup file must be a startup program:
// no feed or fetch op, every op reading only persistables or what an
// earlier op of it wrote, the persistable tensors it writes persistables
// of the main program (a main program given as the startup file is
// refused).
//
// # Communicator set-up
//
// AddCommSetup prepends to a rank's startup program the creation of every
// communicator its programs use, as Paddle's executor needs to run their
// collectives: per ring, in ascending ring id order on every rank (ranks
// creating communicators in different orders hang), a c_gen_nccl_id
// writing the ring's id to a persistable RAW var (CommIDVar) and a
// c_comm_init making the communicator from it. 'distpass partition -all
// -format pdmodel' does so for every rank. Import reads these ops back as
// any others; the simulator runs them as no-ops.
//
// # Truncated files
//
// A file cut short is told as truncated, naming the innermost field being
// read when the file ended, by number and name, and its offset:
// "model.pdmodel: BlockDesc 0 > VarDesc "x" > VarType > dense_tensor >
// TensorDesc: field 2 (dims) truncated: the file ends inside its value at
// byte offset 97".
//
// Sniff tells a ProgramDesc from a pickle (Paddle's .pdparams, and the
// model_state_rank*.pdmodel that save_distributed_checkpoint writes) by
// content.
package paddle
