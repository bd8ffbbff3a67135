package ops

import (
	"fmt"
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
)

// collectiveDefs: the ops that communicate between ranks (Paddle's c_*
// collectives, their newer names, point-to-point transfers) and the
// stream syncs that order them. The MoE exchanges are in moe.go. Shapes
// are per rank: a per-rank program's inputs are local, and nranks is the
// group's size.
func collectiveDefs() []*Def {
	ring := intAttr("ring_id", 0)
	calc := boolAttr("use_calc_stream", false)
	mp := boolAttr("use_model_parallel", false)
	nranks := Attr{Name: "nranks", Type: ir.KindInt} // no default: Paddle requires it
	// coll is a collective of one input x and one output out.
	coll := func(t, doc, x, out, shape string, infer func(c *Infer) error, attrs ...Attr) *Def {
		return &Def{Type: t, Doc: doc, Inputs: in(x), Outputs: in(out),
			Attrs: append([]Attr{ring, calc}, attrs...), Traits: Collective, Shape: shape, Infer: infer}
	}
	same := func(t, doc string, attrs ...Attr) *Def {
		return coll(t, doc, "X", "Out", "Out = X", sameAs("X", "Out"), attrs...)
	}
	// alltoall exchanges the MoE counts: each rank's own, which no
	// mapping of one tensor states.
	alltoall := same("alltoall", "X's dim-0 parts exchanged between the ranks of ring_id (part j to rank j)")
	alltoall.Sharding, alltoall.ShardingDoc = freeRule, exchangeCountsDoc
	alltoall.Traits |= OwnPart
	ownPart := func(d *Def) *Def {
		d.Traits |= OwnPart
		return d
	}
	newer := func(d *Def, t string, reduce int) *Def {
		d.Newer = &Newer{Type: t, ReduceType: reduce}
		return d
	}
	var defs []*Def
	var codes []ir.Value
	var spelled []string
	for code, r := range ReduceTypes {
		defs = append(defs,
			newer(same("c_allreduce_"+r, "the "+r+" of X over the ranks of ring_id, on every rank", mp), "all_reduce", code),
			same("c_reduce_"+r, "the "+r+" of X over the ranks of ring_id, on rank root_id", intAttr("root_id", 0), mp))
		codes = append(codes, ir.Int(int64(code)))
		spelled = append(spelled, fmt.Sprintf("%d %s", code, r))
	}
	nranks1 := intAttr("nranks", 1)
	// c_concat and c_split default to the calculation stream and model
	// parallelism, as Paddle's makers do.
	mpColl := func(t, doc, shape string, infer func(c *Infer) error) *Def {
		return &Def{Type: t, Doc: doc, Inputs: in("X"), Outputs: in("Out"), Traits: Collective, Shape: shape, Infer: infer,
			Attrs: []Attr{ring, boolAttr("use_calc_stream", true), boolAttr("use_model_parallel", true), nranks1, intAttr("rank", 0)}}
	}
	defs = append(defs,
		same("mp_allreduce_sum", "the sum of X over the model-parallel ranks of ring_id", mp),
		same("c_identity", "X; its gradient is summed over ring_id (Megatron's f)", mp),
		newer(same("c_broadcast", "rank root's X, on every rank of ring_id", intAttr("root", 0)), "broadcast", -1),
		newer(coll("c_allgather", "the X of every rank of ring_id, concatenated along dim 0 (stacked when 0-D)",
			"X", "Out", "Out = X with dim 0 times nranks ([nranks] for a 0-D X)", scaleDim("X", "Out", 0, true), nranks), "all_gather", -1),
		newer(coll("c_reducescatter", "this rank's part (along dim 0) of the sum of X over ring_id",
			"X", "Out", "Out = X with dim 0 divided by nranks", scaleDim("X", "Out", 0, false), nranks1), "reduce_scatter", -1),
		coll("c_scatter", "this rank's part (along dim 0) of rank root's X",
			"X", "Out", "Out = X with dim 0 divided by nranks", scaleDim("X", "Out", 0, false), nranks1, intAttr("root", 0)),
		mpColl("c_concat", "the X of every rank of ring_id, concatenated along the last dim",
			"Out = X with the last dim times nranks", scaleDim("X", "Out", -1, true)),
		mpColl("c_split", "this rank's part of X along the last dim",
			"Out = X with the last dim divided by nranks", scaleDim("X", "Out", -1, false)),
		newer(alltoall, "all_to_all", -1),
		same("c_alltoall", "X's dim-0 parts exchanged between the ranks of ring_id (part j to rank j)"),
		same("barrier", "X, once every rank of ring_id has reached the barrier"),
		same("partial_allgather", "X with every rank's part (of nranks) gathered in place", nranks1, intAttr("rank", 0)),
		// Paddle's newer dialect: lower-case slots (passes/dialect.go).
		coll("all_reduce", "the reduction (reduce_type "+strings.Join(spelled, ", ")+") of x over ring_id",
			"x", "out", "out = x", sameAs("x", "out"), mp,
			Attr{Name: "reduce_type", Type: ir.KindInt, Default: ir.Int(0), Allowed: codes}),
		coll("broadcast", "rank root's x, on every rank of ring_id", "x", "out", "out = x", sameAs("x", "out"), intAttr("root", 0)),
		coll("all_gather", "the x of every rank of ring_id, concatenated along dim 0 (stacked when 0-D)",
			"x", "out", "out = x with dim 0 times nranks ([nranks] for a 0-D x)", scaleDim("x", "out", 0, true), intAttr("nranks", 0)),
		coll("reduce_scatter", "this rank's part (along dim 0) of the sum of x over ring_id",
			"x", "out", "out = x with dim 0 divided by nranks", scaleDim("x", "out", 0, false), nranks1),
		ownPart(coll("all_to_all", "x's dim-0 parts exchanged between the ranks of ring_id", "x", "out", "out = x", sameAs("x", "out"))),
	)
	p2p := func(t, doc, x string, attrs ...Attr) *Def {
		return &Def{Type: t, Doc: doc, Inputs: in(x), Traits: Collective,
			Attrs: append([]Attr{ring, calc, intAttr("peer", 0), boolAttr("dynamic_shape", false)}, attrs...)}
	}
	recv := func(t, doc, out string, attrs ...Attr) *Def {
		return &Def{Type: t, Doc: doc, Outputs: in(out), Traits: Collective,
			Attrs: append([]Attr{ring, calc, intAttr("peer", 0), boolAttr("dynamic_shape", false),
				dtypeAttr("dtype", 5), intsAttr("out_shape", []int64{}...)}, attrs...),
			Shape: "Out = out_shape (the declared shape without one), dtype",
			Infer: inferRecv(out)}
	}
	part := []Attr{intAttr("num", 1), intAttr("id", 0)}
	defs = append(defs,
		p2p("send_v2", "X sent to rank peer of ring_id", "X"),
		recv("recv_v2", "a tensor received from rank peer of ring_id", "Out"),
		p2p("partial_send", "part id of num of X sent to rank peer", "X", part...),
		recv("partial_recv", "part id of num of a tensor received from rank peer", "Out", part...),
		p2p("p_send", "x sent to rank peer of ring_id (the newer dialect)", "x"),
		// p_recv's dtype is a DataType name in the newer dialect: its
		// declared type is taken as it stands.
		&Def{Type: "p_recv", Doc: "a tensor received from rank peer of ring_id (the newer dialect)",
			Outputs: in("out"), Traits: Collective,
			Attrs: []Attr{ring, intAttr("peer", 0), boolAttr("dynamic_shape", false)}},
	)
	// Stream syncs move no data: each Out is its X.
	sync := func(t, doc string, attrs ...Attr) *Def {
		return &Def{Type: t, Doc: doc, Inputs: slots(many("X")), Outputs: slots(many("Out")), Attrs: attrs,
			Shape: "each Out = its X", Infer: inferEach, NoRule: "a stream sync, of partitioned programs only"}
	}
	defs = append(defs,
		sync("c_sync_calc_stream", "waits for the computation stream"),
		sync("c_sync_comm_stream", "waits for the communication stream of ring_id", ring),
		sync("c_wait_comm", "makes the computation stream wait for ring_id's communication", ring),
		sync("c_wait_compute", "makes ring_id's communication wait for the computation stream", ring),
	)
	for _, d := range defs {
		if c, ok := collectiveCosts[d.Type]; ok {
			d.Cost = &c
		}
	}
	return defs
}

// Classic returns op spelled in the classic dialect when it is a
// collective in Paddle's newer one (all_reduce with its reduce_type,
// slots x and out; what passes' collective-dialect writes), a copy that
// shares op's attrs and args; else op itself and false.
func Classic(op *ir.Op) (*ir.Op, bool) {
	code, _ := ir.AsInt(op.Attrs.Get("reduce_type"))
	for _, d := range theTable().newer[op.Type] {
		if d.Newer.ReduceType >= 0 && int64(d.Newer.ReduceType) != code {
			continue
		}
		c := *op
		c.Type = d.Type
		c.Inputs, c.Outputs = upperSlots(op.Inputs), upperSlots(op.Outputs)
		return &c, true
	}
	return op, false
}

// newerSlot is the newer dialect's spelling of a collective's slots.
var newerSlot = map[string]string{"X": "x", "Out": "out"}

// NewerSlots returns ss with the slots spelled as Paddle's newer dialect
// spells a collective's (X and Out as x and out).
func NewerSlots(ss []ir.Slot) []ir.Slot { return respell(ss, newerSlot) }

// upperSlots undoes NewerSlots.
func upperSlots(ss []ir.Slot) []ir.Slot {
	back := map[string]string{}
	for k, v := range newerSlot {
		back[v] = k
	}
	return respell(ss, back)
}

func respell(ss []ir.Slot, as map[string]string) []ir.Slot {
	out := slices.Clone(ss)
	for i := range out {
		if n, ok := as[out[i].Name]; ok {
			out[i].Name = n
		}
	}
	return out
}

// CommSetupTypes are Paddle's communicator set-up ops, which a rank's
// startup program written for Paddle begins with (partition -all -format
// pdmodel): c_gen_nccl_id makes a ring's communicator id, a RAW var, and
// c_comm_init the communicator from it. They move no tensor.
var CommSetupTypes = []string{"c_gen_nccl_id", "c_comm_init"}

// scaleDim returns the Infer of a collective whose output is its input
// with dim d (-1: the last) multiplied (gather) or divided (scatter) by
// attr nranks. Paddle wants nranks of at least 2; one is accepted, as a
// world of one is how a serial program runs a collective.
func scaleDim(x, out string, d int, gather bool) func(c *Infer) error {
	return func(c *Infer) error {
		t, ok := c.In(x)
		if !ok {
			return nil
		}
		if c.attr("nranks") == nil {
			return c.Errorf("attr nranks is required (the size of the group)")
		}
		n := c.Int("nranks")
		if n < 1 {
			return c.Errorf("nranks %d: want at least 1", n)
		}
		if len(t.Shape) == 0 {
			if gather && d == 0 {
				c.Set(out, t.DType, []int64{n}) // the ranks' scalars, stacked
				return nil
			}
			return c.Errorf("%s %s is 0-D: it has no dim to split or join", x, c.Name(x))
		}
		if d < 0 {
			d = len(t.Shape) - 1
		}
		s := c.Shape(len(t.Shape))
		copy(s, t.Shape)
		switch {
		case s[d] < 0:
		case gather:
			s[d] *= n
		case s[d]%n != 0:
			return c.Errorf("%s %s %s: dim %d (%d) does not split over nranks %d", x, c.Name(x), ir.FormatShape(t.Shape), d, s[d], n)
		default:
			s[d] /= n
		}
		c.Set(out, t.DType, s)
		return nil
	}
}

// inferRecv infers recv_v2 and partial_recv: the dtype attr, and the
// out_shape attr unless it is empty or dynamic_shape is set, when the
// declared shape is all there is.
func inferRecv(out string) func(c *Infer) error {
	return func(c *Infer) error {
		shape, _ := c.Ints("out_shape")
		if len(shape) == 0 || c.Bool("dynamic_shape") {
			t, ok := c.Out(out, 0)
			if !ok {
				return nil
			}
			shape = t.Shape
		}
		c.Set(out, c.dtypeOf("dtype"), shape)
		return nil
	}
}

// inferEach gives each Out arg the type of the X arg at its position.
func inferEach(c *Infer) error {
	n := c.NumOut("Out")
	if c.NumIn("X") != n {
		return c.Errorf("%d X args but %d Out args: each Out is its X", c.NumIn("X"), n)
	}
	for i := range n {
		if t, ok := c.InAt("X", i); ok {
			c.SetAt("Out", i, t.DType, t.Shape)
		}
	}
	return nil
}

// collectiveCosts are the collectives' traffic (Def.Cost), by type.
var collectiveCosts = map[string]Cost{
	"c_allreduce_sum": {Ring: 2}, "c_allreduce_max": {Ring: 2}, "c_allreduce_min": {Ring: 2},
	"c_allreduce_prod": {Ring: 2}, "c_allreduce_avg": {Ring: 2}, "all_reduce": {Ring: 2}, "mp_allreduce_sum": {Ring: 2},
	"c_allgather": {Ring: 1, OfOutput: true}, "all_gather": {Ring: 1, OfOutput: true}, "c_concat": {Ring: 1, OfOutput: true},
	"partial_allgather": {Ring: 1, OfOutput: true},
	"c_reducescatter":   {Ring: 1}, "reduce_scatter": {Ring: 1},
	"alltoall": {Ring: 1}, "all_to_all": {Ring: 1}, "c_alltoall": {Ring: 1},
	"c_broadcast": {Ring: 1}, "broadcast": {Ring: 1},
	"c_reduce_sum": {Ring: 1}, "c_reduce_max": {Ring: 1}, "c_reduce_min": {Ring: 1}, "c_reduce_prod": {Ring: 1},
	"c_reduce_avg": {Ring: 1}, "c_scatter": {Ring: 1},
	"send_v2": {Whole: true}, "p_send": {Whole: true}, "recv_v2": {Whole: true, OfOutput: true}, "p_recv": {Whole: true, OfOutput: true},
	"partial_send": {Whole: true, Sliced: true}, "partial_recv": {Whole: true, OfOutput: true, Sliced: true},
	"c_identity": {None: true}, "c_split": {None: true}, "barrier": {None: true},
}
