package passes

import (
	"fmt"

	"github.com/distpass/distpass/ir"
)

// Paddle's ReduceType codes, for all_reduce's reduce_type attr.
const (
	reduceSum  = 0
	reduceMax  = 1
	reduceMin  = 2
	reduceProd = 3
	reduceAvg  = 4
)

// pirCollective says how one c_* collective is spelled in the newer
// dialect: its new type, a reduce_type (-1: none), and lower-case slots.
type pirCollective struct {
	typ    string
	reduce int
}

var pirCollectives = map[string]pirCollective{
	"c_allreduce_sum":  {"all_reduce", reduceSum},
	"c_allreduce_max":  {"all_reduce", reduceMax},
	"c_allreduce_min":  {"all_reduce", reduceMin},
	"c_allreduce_prod": {"all_reduce", reduceProd},
	"c_allreduce_avg":  {"all_reduce", reduceAvg},
	"c_broadcast":      {"broadcast", -1},
	"c_allgather":      {"all_gather", -1},
	"c_reducescatter":  {"reduce_scatter", -1},
	"alltoall":         {"all_to_all", -1},
}

// CollectiveDialectPass renames emitted collectives for runtimes that
// want Paddle's newer names.
func CollectiveDialectPass() *Pass {
	return &Pass{
		Name: "collective-dialect",
		Doc: `rename collectives to another runtime's dialect
style=pir turns c_allreduce_{sum,max,min,prod,avg} into all_reduce with
a reduce_type attr (0 sum, 1 max, 2 min, 3 prod, 4 avg), c_broadcast
into broadcast,
c_allgather into all_gather, c_reducescatter into reduce_scatter and
alltoall into all_to_all, with the slots X and Out spelled x and out.
style=g1 (the default) keeps the names the lowering emits. Counts
ops-renamed.`,
		Options: []Option{{Name: "style", Kind: OptString, Default: "g1", Doc: "the collective names to use", Values: []string{"g1", "pir"}}},
		Run: func(ctx *Context, m *ir.Module) error {
			switch style := ctx.String("style"); style {
			case "g1":
				return nil
			case "pir":
			default:
				return fmt.Errorf("unknown style %q (want g1 or pir)", style)
			}
			n := 0
			for _, p := range m.Programs() {
				for _, b := range p.Blocks {
					for _, op := range b.Ops {
						pc, ok := pirCollectives[op.Type]
						if !ok {
							continue
						}
						op.Type = pc.typ
						if pc.reduce >= 0 {
							op.Attrs.Set("reduce_type", ir.Int(pc.reduce))
						}
						lowerSlots(op.Inputs)
						lowerSlots(op.Outputs)
						n++
					}
				}
			}
			ctx.Count("ops-renamed", n)
			return nil
		},
	}
}

func lowerSlots(ss []ir.Slot) {
	for i := range ss {
		switch ss[i].Name {
		case "X":
			ss[i].Name = "x"
		case "Out":
			ss[i].Name = "out"
		}
	}
}
