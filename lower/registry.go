package lower

import (
	"fmt"
	"sort"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// Impl is one way to lower an op: a dist-op implementation.
type Impl struct {
	// Name says what the impl does: "column_parallel".
	Name string
	// Doc says in one line what the lowering emits.
	Doc string
	// Compatible returns why the op's dist does not fit this impl, or nil.
	// A nil Compatible accepts every op. The lowering calls it once, on
	// the forward op, before Forward; Forward need not check again, and
	// Backward lowers the grad of an op it accepted.
	Compatible func(ctx *Lowering, op *ir.Op) error
	// Reduces says that Forward reduces, with a collective, the partial
	// value the op's local computation gives (its sharding rule's partial
	// output), so that the output var may be whole: row-parallel matmul,
	// vocab-parallel embedding. Completion then makes the output whole
	// unless told to keep partials lazily.
	Reduces bool
	// Forward lowers a forward (or recompute) op.
	Forward func(ctx *Lowering, op *ir.Op) error
	// Backward lowers a backward op (and optimize ops, and backward-only
	// ops such as check_finite_and_unscale); op is the grad op.
	Backward func(ctx *Lowering, op *ir.Op) error
}

// Container holds the impls of one impl type, by index.
type Container struct {
	Type  string
	Impls []*Impl
}

// Registry maps impl types to containers.
type Registry struct {
	containers map[string]*Container
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{containers: map[string]*Container{}} }

// Register appends impl to the container of implType and returns its
// index, as Paddle numbers impls in registration order.
func (r *Registry) Register(implType string, impl *Impl) int {
	c := r.containers[implType]
	if c == nil {
		c = &Container{Type: implType}
		r.containers[implType] = c
	}
	c.Impls = append(c.Impls, impl)
	return len(c.Impls) - 1
}

// Lookup returns the impl of implType at index, or an error that says
// which part does not exist.
func (r *Registry) Lookup(implType string, index int) (*Impl, error) {
	c := r.containers[implType]
	if c == nil {
		return nil, fmt.Errorf("no impl type %q", implType)
	}
	if index < 0 || index >= len(c.Impls) {
		return nil, fmt.Errorf("impl type %s has no impl %d (it has %d)", implType, index, len(c.Impls))
	}
	return c.Impls[index], nil
}

// Generic impl types: their containers lower ops of any type. Every other
// container is named after the one op type it lowers, as Paddle names its
// dist-op containers ("matmul_v2", "softmax", …). SPMDType's impl lowers
// any op type that has a sharding rule (SPMD).
const (
	DefaultType     = "default"
	ElementwiseType = "elementwise"
	SPMDType        = "spmd"
)

// Lowers reports whether impls of implType may lower an op of opType: a
// generic impl type lowers any op, every other only the op type it is
// named after. An impl named on another op type is a mistake that its
// compatibility check may not see (softmax's only looks at the axis of X
// and Out), so the partitioner asks this of every op it lowers with the
// op's own impl.
func Lowers(implType, opType string) bool {
	return implType == DefaultType || implType == ElementwiseType || implType == SPMDType || implType == opType
}

// Containers returns the containers sorted by type.
func (r *Registry) Containers() []*Container {
	cs := make([]*Container, 0, len(r.containers))
	for _, c := range r.containers {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].Type < cs[j].Type })
	return cs
}

// DefaultRegistry returns every built-in impl, registered in Paddle's
// order so that impl indices match Paddle's.
func DefaultRegistry() *Registry {
	r := NewRegistry()
	r.Register("default", DefaultImpl())
	for _, typ := range []string{"matmul_v2", "matmul", "mul"} {
		r.Register(typ, MatmulColumn())
		r.Register(typ, MatmulRow())
		r.Register(typ, MatmulReplicated())
	}
	for _, typ := range []string{"lookup_table_v2", "lookup_table"} {
		r.Register(typ, EmbeddingVocabParallel())
	}
	r.Register("elementwise", Elementwise())
	r.Register("reshape2", ReshapeAddOneDimBack())
	r.Register("reshape2", ReshapeRemoveOneDimBack())
	r.Register("reshape2", ReshapeSameDimShape())
	r.Register("transpose2", TransposeSameMapping())
	r.Register("softmax", SoftmaxReplicateLastAxis())
	r.Register("batch_norm", SyncBatchNorm())
	r.Register("check_finite_and_unscale", CheckFiniteAndUnscale())
	r.Register("update_loss_scaling", UpdateLossScaling())
	for _, typ := range []string{"global_scatter", "global_gather", "alltoall"} {
		r.Register(typ, ExpertExchange())
	}
	r.Register("grouped_matmul", GroupedMatmulExpert())
	r.Register("limit_by_capacity", ExpertCapacity())
	r.Register("prune_gate_by_capacity", ExpertCapacity())
	r.Register(SPMDType, SPMD())
	r.Register(ops.ReshardType, Reshard())
	return r
}
