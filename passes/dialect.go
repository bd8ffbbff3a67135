package passes

import (
	"fmt"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// CollectiveDialectPass renames emitted collectives for runtimes that
// want Paddle's newer names.
func CollectiveDialectPass() *Pass {
	return &Pass{
		Name: "collective-dialect",
		Doc: `rename collectives to another runtime's dialect
style=pir spells each collective as the op table's Newer says:
c_allreduce_{sum,max,min,prod,avg} as all_reduce with a reduce_type
attr (0 sum, 1 max, 2 min, 3 prod, 4 avg), c_broadcast as broadcast,
c_allgather as all_gather, c_reducescatter as reduce_scatter and
alltoall as all_to_all, with the slots X and Out spelled x and out.
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
						d := ops.Lookup(op.Type)
						if d == nil || d.Newer == nil {
							continue
						}
						op.Type = d.Newer.Type
						if d.Newer.ReduceType >= 0 {
							op.Attrs.Set("reduce_type", ir.Int(int64(d.Newer.ReduceType)))
						}
						op.Inputs, op.Outputs = ops.NewerSlots(op.Inputs), ops.NewerSlots(op.Outputs)
						n++
					}
				}
			}
			ctx.Count("ops-renamed", n)
			return nil
		},
	}
}
