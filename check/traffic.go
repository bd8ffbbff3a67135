package check

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/passes"
	"github.com/distpass/distpass/sim"
)

// Traffic is what each collective moved in one simulated training step:
// bytes per rank and op id (op ids are unique in a module, startup's and
// main's alike).
type Traffic struct {
	// Ranks lists the ranks that ran, ascending.
	Ranks []int
	bytes map[trafficKey]int64
}

type trafficKey struct {
	rank int
	op   int64
}

// Bytes returns what rank moved for op in the step (summed over the
// op's runs, should it run in a loop), and false when the op never ran
// on rank.
func (t *Traffic) Bytes(rank int, op int64) (int64, bool) {
	b, ok := t.bytes[trafficKey{rank, op}]
	return b, ok
}

// MeasureTraffic partitions m for every rank, runs every rank's startup
// program and then one step of main in the SPMD simulator, fed as Run
// feeds them (Options.Steps and Tol are ignored), and records the bytes
// each collective moved on each rank. The figures follow the formulas of
// analysis.CollectiveBytes applied to the tensors the op actually had,
// except for the MoE exchanges: a global_scatter or global_gather moves
// the rows this rank sends to the other members of its group (its
// local_count blocks for them, for a scatter; its global_count blocks
// for them, for a gather) × columns × dtype size. Rows a rank sends to
// itself are free. A sync_batch_norm (or its grad) all-reduces inside its
// kernel, where no hook sees the tensors: each run of one counts the
// figure of analysis.Comm for it, so the step says whether and how often
// it ran. m is not changed.
func MeasureTraffic(ctx context.Context, m *ir.Module, opts Options) (*Traffic, error) {
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if opts.Registry == nil {
		opts.Registry = lower.DefaultRegistry()
	}
	if opts.Kernels == nil {
		opts.Kernels = sim.DefaultKernels()
	}
	if err := checkRanks(m); err != nil {
		return nil, err
	}
	mods, err := passes.PartitionAll(ctx, m, opts.Registry)
	if err != nil {
		return nil, err
	}
	ranks := passes.Ranks(m)
	init, _, err := initialValues(m, opts)
	if err != nil {
		return nil, err
	}
	scopes, err := shardScopes(m, mods, ranks, init)
	if err != nil {
		return nil, err
	}
	byRank := make(map[int]*ir.Module, len(ranks))
	for i, r := range ranks {
		byRank[r] = mods[i]
	}
	inside, err := allReducesInside(ranks, mods)
	if err != nil {
		return nil, err
	}
	tr := &Traffic{Ranks: ranks, bytes: map[trafficKey]int64{}}
	var (
		mu   sync.Mutex
		errs []error
	)
	spmd := &sim.SPMD{Kernels: opts.Kernels, Deadline: opts.Deadline, MaxLoopOps: opts.MaxLoopOps,
		Observe: func(rank int, op *ir.Op, in, out sim.Args) {
			b, err := movedBytes(byRank[rank], rank, op, in, out)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("rank %d: %s: %w", rank, op, err))
				return
			}
			tr.bytes[trafficKey{rank, op.ID}] += b
		}}
	if len(inside) > 0 {
		spmd.OpTime = func(rank int, op *ir.Op, _ time.Duration) {
			k := trafficKey{rank, op.ID}
			if b, ok := inside[k]; ok {
				mu.Lock()
				defer mu.Unlock()
				tr.bytes[k] += b
			}
		}
	}
	if mods[0].Startup != nil {
		if _, err := spmd.RunProgram("startup", ranks, mods, scopes); err != nil {
			return nil, fmt.Errorf("per-rank startup: %w", err)
		}
	}
	if _, err := spmd.RunProgram("main", ranks, mods, scopes); err != nil {
		return nil, fmt.Errorf("spmd step: %w", err)
	}
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return tr, nil
}

// allReducesInside returns Comm's figure for every op of the ranks'
// programs that all-reduces inside its kernel and has one (not
// data-dependent), by rank and op id; nil when there is none.
func allReducesInside(ranks []int, mods []*ir.Module) (map[trafficKey]int64, error) {
	var out map[trafficKey]int64
	for i, pm := range mods {
		if !hasAllReduceInside(pm) {
			continue
		}
		rep, err := analysis.Get[*analysis.CommReport](analysis.NewCache(pm), analysis.Comm)
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", ranks[i], err)
		}
		for _, c := range rep.Ops {
			if analysis.AllReducesInside(c.Type) && !c.DataDependent {
				if out == nil {
					out = map[trafficKey]int64{}
				}
				out[trafficKey{ranks[i], c.ID}] = c.Bytes
			}
		}
	}
	return out, nil
}

func hasAllReduceInside(m *ir.Module) bool {
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			if b != nil && slices.ContainsFunc(b.Ops, func(op *ir.Op) bool { return op != nil && analysis.AllReducesInside(op.Type) }) {
				return true
			}
		}
	}
	return false
}

// movedBytes is what rank moved for one run of op, given its tensors.
func movedBytes(m *ir.Module, rank int, op *ir.Op, in, out sim.Args) (int64, error) {
	group := []int{rank}
	if peer, ok := ir.AsInt(ops.AttrValue(op, "peer")); ok && (op.Type == "send_v2" || op.Type == "recv_v2") {
		group = []int{rank, int(peer)}
	} else if id, ok := ir.AsInt(ops.AttrValue(op, "ring_id")); ok {
		if g := m.Group(int(id)); g != nil {
			group = slices.Sorted(slices.Values(g.Ranks))
		}
	}
	if ops.Has(op.Type, ops.DataDependent) {
		return exchangeBytes(op, in, group, rank)
	}
	b, ok := analysis.CollectiveBytes(op.Type, len(group), tensorBytes(first(in, "X", "x")), tensorBytes(first(out, "Out", "out")))
	if !ok {
		return 0, fmt.Errorf("no cost formula for collective type %s", op.Type)
	}
	return b, nil
}

// exchangeBytes is what a global_scatter or global_gather sends to the
// other members of group: the count blocks of every other member j,
// j*n_expert ... (j+1)*n_expert-1, of local_count for a scatter (what
// this rank routes to j's experts) or of global_count for a gather (what
// j's tokens sent this rank's experts, now returned), in rows of X.
func exchangeBytes(op *ir.Op, in sim.Args, group []int, rank int) (int64, error) {
	x := first(in, "X")
	slot := "local_count"
	if op.Type == "global_gather" {
		slot = "global_count"
	}
	counts := first(in, slot)
	me := slices.Index(group, rank)
	if x == nil || counts == nil || x.Rank() != 2 || me < 0 || len(counts.Data)%len(group) != 0 {
		return 0, fmt.Errorf("cannot measure: want X rows and %s over group %v", slot, group)
	}
	nExpert := len(counts.Data) / len(group)
	var rows int64
	for j := range group {
		if j == me {
			continue
		}
		for _, c := range counts.Data[j*nExpert : (j+1)*nExpert] {
			rows += int64(c)
		}
	}
	return rows * x.Shape[1] * int64(x.DType.Size()), nil
}

// first returns the first tensor of the first of slots that has one.
func first(a sim.Args, slots ...string) *sim.Tensor {
	for _, s := range slots {
		if ts := a[s]; len(ts) > 0 && ts[0] != nil {
			return ts[0]
		}
	}
	return nil
}

func tensorBytes(t *sim.Tensor) int64 {
	if t == nil {
		return 0
	}
	return t.Numel() * int64(t.DType.Size())
}
