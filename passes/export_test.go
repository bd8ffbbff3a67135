package passes

import (
	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/registry"
)

// PartitionStep is one step of Partition's work, for the external tests.
type PartitionStep struct {
	Name string
	Run  func() error
}

// PartitionSteps returns Partition's work on m for rank as steps to run
// in order, one at a time: the analyses (the index, the local shapes and
// the annotation check, which Partition computes on two cores), then its
// steps as Partition runs them, the lowering with the index's vars. The
// steps' outputs are Partition's (TestPartitionStepsArePartition).
func PartitionSteps(m *ir.Module, reg *registry.Registry, rank int) []PartitionStep {
	cache := analysis.NewCache(m)
	pre := newIndexedArgs(m)
	return []PartitionStep{
		{"index", func() error {
			var err error
			if pre != nil {
				pre.index, err = analysis.Get[*analysis.IndexInfo](cache, analysis.Index)
			}
			return err
		}},
		{"local-shapes", func() error {
			_, err := analysis.Get[*analysis.LocalShapeInfo](cache, analysis.LocalShapes(rank))
			return err
		}},
		{"check-annotations", func() error {
			rep, err := analysis.Get[*analysis.AnnotationReport](cache, analysis.Annotations)
			if err != nil {
				return err
			}
			return rep.Err()
		}},
		{"partition-vars", func() error { return partitionVars(cache, m, rank) }},
		{"lower-forward", func() error { return lower(m, reg, LowerForward, pre) }},
		{"lower-backward", func() error { return lower(m, reg, LowerBackward, pre) }},
		{"lower-optimizer", func() error { return lower(m, reg, LowerOptimizer, pre) }},
		{"relink-block-attrs", func() error { return RelinkBlockAttrs(m) }},
		{"remap-params-grads", func() error { return RemapParamsGrads(m) }},
	}
}
