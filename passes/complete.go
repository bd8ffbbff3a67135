package passes

import (
	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
)

// CompleteReportNote is the key under which the complete pass notes its
// *complete.Report on its execution (Execution.Note).
const CompleteReportNote = "complete.report"

// CompletePass is sharding completion (package complete) with the impls
// of reg.
func CompletePass(reg *lower.Registry) *Pass {
	return &Pass{
		Name: "complete",
		Doc: `infer every var's and op's dist and impl from a few annotations
Sharding completion: the mappings of the annotated vars (the data's batch
on dp, the weights on mp) and ops flow through the op table's sharding
rules, forward and backward, to a fixpoint; then each op takes what its
rule requires of its inputs and gives its outputs, the first impl that
fits, and grad and optimizer ops follow their forward ops and params.
Annotated vars and ops keep their dists. Where an op requires another
dist than its input var has, the module needs a reshard there (listed by
distpass complete -report; check-annotations refuses it). Counters:
vars-completed, conflicts, uneven, barriers, reshards-needed.`,
		Options: []Option{
			{Name: "lazy", Kind: OptBool, Default: "false",
				Doc: "keep partial results partial even where the op's impl can reduce them (a row-parallel matmul's Out): whoever needs them whole pays by a reshard"},
		},
		Run: func(ctx *Context, m *ir.Module) error {
			rep, err := complete.Complete(m, complete.Options{Registry: reg, Lazy: ctx.Bool("lazy")})
			if err != nil {
				return err
			}
			ctx.Count("vars-completed", rep.Vars.Completed)
			ctx.Count("conflicts", len(rep.Conflicts))
			ctx.Count("uneven", len(rep.Uneven))
			ctx.Count("barriers", len(rep.Barriers))
			ctx.Count("reshards-needed", len(rep.Reshards))
			ctx.Note(CompleteReportNote, rep)
			return nil
		},
	}
}
