package passes

import (
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/ops"
)

// DefaultRegistry returns the built-in passes and their order rules. It is
// the one list of what distpass ships; nothing registers itself.
func DefaultRegistry() *Registry {
	reg := lower.DefaultRegistry()
	ps := []*Pass{
		VerifyPass(),
		DCEPass(),
		CanonicalizeNamesPass(),
		RepeatPass(),
		CollectiveDialectPass(),
		MakeTrainablePass(),
		AppendBackwardPass(),
		AppendOptimizerPass(),
		AnnotateDataParallelPass(),
		AnnotateTensorParallelPass(),
		AnnotatePass(),
		CompletePass(reg),
		InsertReshardsPass(),
		ToF64Pass(),
	}
	ps = append(ps, PartitionPasses(reg)...)
	order := []OrderRule{
		{"make-trainable", "append-backward", "the loss append-backward differentiates is the one make-trainable adds"},
		{"dce", "canonicalize-names", "canonical names number the vars that survive; renaming first would leave gaps"},
		{"append-backward", "append-optimizer", "the optimizer updates parameters with the grads append-backward makes"},
		{"append-backward", "partition-vars", "partitioning lowers backward ops through their forward ops, so the backward ops must exist first"},
		{"append-backward", "partition", "partitioning lowers backward ops through their forward ops, so the backward ops must exist first"},
		{"append-optimizer", "partition-vars", "partitioning needs the optimizer ops to lower them"},
		{"append-optimizer", "partition", "partitioning needs the optimizer ops to lower them"},
		{"append-backward", "annotate-data-parallel", "the grad ops and vars need their annotations too"},
		{"annotate-tensor-parallel", "append-backward", "the grads take the dists annotate-tensor-parallel gives the params"},
		{"make-trainable", "annotate-tensor-parallel", "the MLPs' weights are trainable params once make-trainable makes them so"},
		{"annotate-data-parallel", "append-optimizer", "append-optimizer annotates its ops and state from the params' dists"},
		{"annotate-data-parallel", "check-annotations", "there is nothing to check before the annotations exist"},
		{"annotate-data-parallel", "partition", "partitioning needs the annotations"},
		{"complete", "check-annotations", "there is nothing complete to check before completion"},
		{"complete", "partition-vars", "partitioning needs every dist, which completion infers"},
		{"complete", "partition", "partitioning needs every dist, which completion infers"},
		{"complete", "insert-reshards", "the reshards come from the dists completion infers"},
		{"insert-reshards", "partition", "partitioning lowers the reshards; it refuses the data movements they would make explicit"},
		{"insert-reshards", "partition-vars", "partitioning lowers the reshards; it refuses the data movements they would make explicit"},
		{"insert-reshards", "check-annotations", "check-annotations refuses the data movements the reshards make explicit"},
	}
	r, err := NewRegistry(ps, append(order, partitionOrder()...))
	if err != nil {
		panic("passes.DefaultRegistry: " + err.Error())
	}
	return r
}

// VerifyPass checks the module with Verify and fails listing every
// violation.
func VerifyPass() *Pass {
	return &Pass{
		Name: "verify",
		Doc: `check every rule of the IR and of the op table
Runs ir.Verify's structural rules and checks every op against its type's
definition (slots, attr kinds and ranges, declared output shapes and
dtypes against inference) and, in a per-rank program, each collective
against the module's group table (its ring_id, peer, root, nranks and
rows), and fails with every violation, each naming its program, block,
op id or var. It changes nothing.`,
		PreservesAll: true,
		Required:     true,
		Run: func(_ *Context, m *ir.Module) error {
			return Verify(m)
		},
	}
}

// Verify checks m as the verify pass does: ir.Verify's structural rules,
// then each op with a definition against the op table
// (ops); an op type without one is accepted.
func Verify(m *ir.Module) error {
	_, err := ops.Verify(m, ops.Options{})
	return err
}

// MaxRepeatCount is the most times repeat runs its sub-pipeline. A
// fixed point that takes more steps is not one a pipeline should wait
// for, and a count of 0 (a step that does nothing) is refused too.
const MaxRepeatCount = 10000

// RepeatPass runs its sub-pipeline count times: repeat{count=2}(dce,verify).
func RepeatPass() *Pass {
	return &Pass{
		Name: "repeat",
		Doc: `run a sub-pipeline several times
repeat{count=N}(p1,p2) runs the nested pipeline N times in a row, for
passes that reach a fixed point in steps; N is 1 to 10000
(MaxRepeatCount).`,
		Options: []Option{{Name: "count", Kind: OptInt, Default: "1", Doc: "how many times to run the sub-pipeline",
			Range: &Range{Min: 1, Max: MaxRepeatCount}}},
		Nested: true,
		Run: func(ctx *Context, m *ir.Module) error {
			for range ctx.Int("count") {
				if err := ctx.RunNested(m); err != nil {
					return err
				}
			}
			return nil
		},
	}
}
