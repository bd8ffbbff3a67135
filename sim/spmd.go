package sim

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// DefaultDeadline is SPMD.Deadline's default: long, since a run of
// thousands of ranks on a few cores keeps a rank computing for seconds
// while its peers wait, and deadlocks do not wait for it.
const DefaultDeadline = 10 * time.Minute

// SPMD runs the programs of every rank at once, one goroutine per rank,
// with collectives that meet in a Comm on the module's group table.
type SPMD struct {
	Kernels Kernels
	// Deadline bounds every wait for the other members of a collective
	// (default DefaultDeadline). Deadlocks are found as they happen, so
	// it only bounds how long a rank computes while its peers wait.
	Deadline time.Duration
	// MaxLoopOps is each rank's Interp.MaxLoopOps (0: DefaultMaxLoopOps).
	MaxLoopOps int
	// Observe, when set, is called after each collective op a rank runs
	// successfully (once per run of the op: a collective in a loop body
	// is observed at every iteration), with the rank, the op, and its
	// input and output tensors by slot. The ranks call it from their own
	// goroutines, at once: it must be safe for concurrent use, and must
	// not modify the tensors.
	Observe func(rank int, op *ir.Op, in, out Args)
	// OpTime, when set, is each rank's Interp.OpTime, told the rank.
	// RankDone, when set, is called as each rank's program ends without
	// error. Both are called from the ranks' goroutines, at once: they
	// must be safe for concurrent use.
	OpTime   func(rank int, op *ir.Op, d time.Duration)
	RankDone func(rank int)
}

// RunProgram runs program prog ("main" or "startup") of every rank's
// module with its scope and returns the scopes after it, in rank order.
// mods[i] is the module of rank ranks[i]. The first error of any rank is
// returned, naming the rank.
func (s *SPMD) RunProgram(prog string, ranks []int, mods []*ir.Module, scopes []Scope) ([]Scope, error) {
	deadline := s.Deadline
	if deadline <= 0 {
		deadline = DefaultDeadline
	}
	comm := NewComm(deadline)
	comm.Expect(len(mods))
	out := make([]Scope, len(mods))
	errs := make([]error, len(mods))
	var wg sync.WaitGroup
	for i := range mods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer comm.Finish(ranks[i])
			// Kernels' panics come back as errors (KernelPanic); this is
			// for the runner's own, which must not crash the process
			// either. Finish runs after it, so the peers stop waiting.
			defer func() {
				if v := recover(); v != nil {
					errs[i] = fmt.Errorf("rank %d: panic: %v", ranks[i], v)
				}
			}()
			r := &rankRun{comm: comm, rank: ranks[i], m: mods[i]}
			ip := NewInterp(r.kernels(s.Kernels))
			ip.MaxLoopOps = s.MaxLoopOps
			ip.Hooks.Collective = r.collective
			if opTime := s.OpTime; opTime != nil {
				ip.OpTime = func(op *ir.Op, d time.Duration) { opTime(r.rank, op, d) }
			}
			if obs := s.Observe; obs != nil {
				ip.Hooks.Collective = func(op *ir.Op, in Args) (Args, error) {
					out, err := r.collective(op, in)
					if err == nil {
						obs(r.rank, op, in, out)
					}
					return out, err
				}
			}
			sc := Scope{}
			for k, v := range scopes[i] {
				sc[k] = v
			}
			var p *ir.Program
			if prog == "startup" {
				p = mods[i].Startup
			} else {
				p = mods[i].Main
			}
			if p != nil {
				if err := ip.RunProgram(p, sc); err != nil {
					errs[i] = fmt.Errorf("rank %d: %w", ranks[i], err)
					return
				}
			}
			out[i] = sc
			if s.RankDone != nil {
				s.RankDone(ranks[i])
			}
		}()
	}
	wg.Wait()
	// A rank's own failure explains the others': report it before any
	// "finished without joining" of its peers.
	var first error
	for _, err := range errs {
		var gone peerGone
		if err != nil && !errors.As(err, &gone) {
			return nil, err
		}
		if first == nil {
			first = err
		}
	}
	if first != nil {
		return nil, first
	}
	return out, nil
}

type rankRun struct {
	comm *Comm
	rank int
	m    *ir.Module
}

// kernels returns ks (or the defaults) with sync_batch_norm's statistics
// all-reduced over its group.
func (r *rankRun) kernels(ks Kernels) Kernels {
	if ks == nil {
		ks = DefaultKernels()
	}
	out := make(Kernels, len(ks))
	for k, v := range ks {
		out[k] = v
	}
	out[ops.ReshardType] = unloweredReshard
	for _, t := range ops.CommSetupTypes {
		out[t] = commSetup
	}
	out["sync_batch_norm"] = rounded(syncBatchNorm(r.syncBNReduce))
	out["sync_batch_norm_grad"] = rounded(syncBatchNormGrad(r.syncBNReduce))
	return out
}

// unloweredReshard refuses a reshard left in a per-rank program: on a
// rank's part it is not the identity, and running it as one would give a
// wrong result silently. Partitioning lowers every reshard.
func unloweredReshard(op *ir.Op, _ Args) (Args, error) {
	return nil, fmt.Errorf("%s: an unlowered reshard: a per-rank program cannot run one (partition lowers them)", op)
}

// p2p runs send_v2 and recv_v2: peer is the other rank's index in the
// group of ring_id, as in Paddle; the pair meets on the group of the two
// ranks, in order, and the receiver takes the sender's tensor.
func (r *rankRun) p2p(op *ir.Op, in Args) (Args, error) {
	idx, err := requiredInt(op, "peer")
	if err != nil {
		return nil, err
	}
	ring, _, err := r.group(op)
	if err != nil {
		return nil, err
	}
	if idx < 0 || int(idx) >= len(ring) {
		return nil, fmt.Errorf("%s: peer %d is outside ring %v", op, idx, ring)
	}
	peer := ring[idx]
	if peer == r.rank {
		return nil, fmt.Errorf("%s: peer %d is the rank itself (%d)", op, idx, peer)
	}
	ringID := attrInt(op, "ring_id", 0)
	g := []int{r.rank, peer}
	if g[1] < g[0] {
		g[0], g[1] = g[1], g[0]
	}
	call := &Call{Rank: r.rank, Group: g, OpID: op.ID, OpType: op.Type, Kind: fmt.Sprintf("p2p/%d", ringID), Peer: peer}
	if op.Type == "send_v2" {
		x, err := oneTensor(op, in, "X")
		if err != nil {
			return nil, err
		}
		call.Payload = x
		_, err = r.comm.Meet(call)
		return Args{}, err
	}
	got, err := r.comm.Meet(call)
	if err != nil {
		return nil, err
	}
	for i, rk := range g {
		if rk == peer {
			t, ok := got[i].(*Tensor)
			if !ok {
				return nil, fmt.Errorf("%s: rank %d sent nothing (both sides received)", op, peer)
			}
			return Args{"Out": {t.Clone()}}, nil
		}
	}
	return nil, fmt.Errorf("%s: peer %d not met", op, peer)
}

func (r *rankRun) group(op *ir.Op) ([]int, int, error) {
	id, err := requiredInt(op, "ring_id")
	if err != nil {
		return nil, 0, err
	}
	g := r.m.Group(int(id))
	if g == nil {
		return nil, 0, fmt.Errorf("%s: ring_id %d is not in the group table", op, id)
	}
	for i, x := range g.Ranks {
		if x == r.rank {
			return g.Ranks, i, nil
		}
	}
	return nil, 0, fmt.Errorf("%s: rank %d is not in group %d %v", op, r.rank, id, g.Ranks)
}

func oneTensor(op *ir.Op, in Args, slot string) (*Tensor, error) {
	ts := in[slot]
	if len(ts) != 1 || ts[0] == nil {
		return nil, fmt.Errorf("%s: want one tensor in %s", op, slot)
	}
	return ts[0], nil
}

// slotOf returns the op's first slot among names that holds args: the
// collectives come in both "X"/"Out" and "x"/"out" spellings.
func slotOf(ss []ir.Slot, names ...string) string {
	for _, n := range names {
		for _, s := range ss {
			if s.Name == n && len(s.Args) > 0 {
				return n
			}
		}
	}
	return names[0]
}

// origin is op's origin_op attr, the serial op its lowering came from, or
// 0 for an op without one (a program another tool made).
func origin(op *ir.Op) int64 {
	id, _ := op.Attrs.Int("origin_op")
	return id
}

func sig(t *Tensor) string { return fmt.Sprintf("%s%v", t.DType, t.Shape) }

// collectiveKind is how the SPMD runner runs a collective.
type collectiveKind uint8

const (
	notRun collectiveKind = iota
	runP2P
	runExperts
	runIdentity
	runSplit
	runAllReduce
	runReduceScatter
	runBroadcast
	runAllGather
	runAllToAll
)

// runnerCollectives are the collectives the SPMD runner runs, by type.
var runnerCollectives = map[string]collectiveKind{
	"send_v2": runP2P, "recv_v2": runP2P,
	"global_scatter": runExperts, "global_gather": runExperts,
	"c_identity": runIdentity, "c_split": runSplit,
	"c_allreduce_sum": runAllReduce, "c_allreduce_max": runAllReduce, "c_allreduce_min": runAllReduce,
	"c_allreduce_prod": runAllReduce, "c_allreduce_avg": runAllReduce, "all_reduce": runAllReduce,
	"c_reducescatter": runReduceScatter, "reduce_scatter": runReduceScatter,
	"broadcast": runBroadcast, "c_broadcast": runBroadcast,
	"c_allgather": runAllGather, "all_gather": runAllGather, "c_concat": runAllGather,
	"alltoall": runAllToAll, "all_to_all": runAllToAll,
}

// collective runs one collective op of this rank.
func (r *rankRun) collective(op *ir.Op, in Args) (Args, error) {
	kind := runnerCollectives[op.Type]
	switch kind {
	case notRun:
		return nil, fmt.Errorf("%s: the simulator has no collective %s", op, op.Type)
	case runP2P:
		return r.p2p(op, in)
	case runExperts:
		return r.moe(op, in)
	}
	inSlot, outSlot := slotOf(op.Inputs, "X", "x"), slotOf(op.Outputs, "Out", "out")
	x, err := oneTensor(op, in, inSlot)
	if err != nil {
		return nil, err
	}
	typ := op.Type
	if typ == "all_reduce" || typ == "reduce_scatter" {
		// The newer dialect's reduction is an attr, read as verify reads
		// it (absent: the table's default, sum).
		rt, err := ops.AttrInt(op, "reduce_type")
		if err != nil {
			return nil, fmt.Errorf("%s: %v", op, err)
		}
		name, ok := ops.ReduceTypeName(rt)
		if !ok {
			codes := make([]string, len(ops.ReduceTypes))
			for c, n := range ops.ReduceTypes {
				codes[c] = fmt.Sprintf("%s (%d)", n, c)
			}
			return nil, fmt.Errorf("%s: reduce_type %d is none of %s", op, rt, strings.Join(codes, ", "))
		}
		if typ == "all_reduce" {
			typ = "c_allreduce_" + name
		} else if name != "sum" {
			return nil, fmt.Errorf("%s: the simulator reduce-scatters sums only, not reduce_type %d", op, rt)
		}
	}
	switch kind {
	case runIdentity:
		// The forward half of Megatron's f: an identity here; its
		// backward allreduce is emitted explicitly by the lowering.
		return Args{outSlot: {x.Clone()}}, nil
	case runSplit:
		g, me, err := r.group(op)
		if err != nil {
			return nil, err
		}
		if err := checkNranks(op, g); err != nil {
			return nil, err
		}
		last := x.Rank() - 1
		n := x.Shape[last] / int64(len(g))
		t, err := x.Slice(last, int64(me)*n, int64(me+1)*n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		return Args{outSlot: {t}}, nil
	}
	g, me, err := r.group(op)
	if err != nil {
		return nil, err
	}
	ringID := attrInt(op, "ring_id", 0)
	call := &Call{Rank: r.rank, Group: g, OpID: op.ID, OpType: op.Type, Kind: fmt.Sprintf("%s/%d", typ, ringID), Payload: x, Origin: origin(op)}
	switch kind {
	case runAllReduce:
		call.Signature = sig(x)
		got, err := r.comm.Meet(call)
		if err != nil {
			return nil, err
		}
		return Args{outSlot: {reduceMembers(typ, got)}}, nil
	case runReduceScatter:
		// The members' sum, each keeping its block of dim 0 (its place
		// in the group).
		if err := checkNranks(op, g); err != nil {
			return nil, err
		}
		n := int64(len(g))
		if x.Rank() == 0 || x.Shape[0]%n != 0 {
			return nil, fmt.Errorf("%s: dim 0 of %v does not split over %d ranks", op, x.Shape, n)
		}
		call.Signature = sig(x)
		got, err := r.comm.Meet(call)
		if err != nil {
			return nil, err
		}
		sum := reduceMembers("c_allreduce_sum", got)
		rows := x.Shape[0] / n
		t, err := sum.Slice(0, int64(me)*rows, int64(me+1)*rows)
		if err != nil {
			return nil, err
		}
		return Args{outSlot: {t}}, nil
	case runBroadcast:
		root := attrInt(op, "root", 0)
		call.Kind = fmt.Sprintf("broadcast/%d/root%d", ringID, root)
		call.Signature = sig(x)
		got, err := r.comm.Meet(call)
		if err != nil {
			return nil, err
		}
		if root < 0 || int(root) >= len(got) {
			return nil, fmt.Errorf("%s: root %d outside group %v", op, root, g)
		}
		return Args{outSlot: {got[root].(*Tensor).Clone()}}, nil
	case runAllGather:
		if err := checkNranks(op, g); err != nil {
			return nil, err
		}
		// Every member contributes the same shape: a rank that sends
		// another is a mismatch to name, not a ragged concatenation.
		call.Signature = sig(x)
		got, err := r.comm.Meet(call)
		if err != nil {
			return nil, err
		}
		dim := 0
		if typ == "c_concat" {
			dim = x.Rank() - 1
		}
		ts := make([]*Tensor, len(got))
		for i, p := range got {
			ts[i] = p.(*Tensor)
		}
		t, err := Concat(dim, ts...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		return Args{outSlot: {t}}, nil
	case runAllToAll:
		call.Signature = sig(x)
		got, err := r.comm.Meet(call)
		if err != nil {
			return nil, err
		}
		n := int64(len(g))
		if x.Rank() == 0 || x.Shape[0]%n != 0 {
			return nil, fmt.Errorf("%s: dim 0 of %v does not split over %d ranks", op, x.Shape, n)
		}
		rows := x.Shape[0] / n
		parts := make([]*Tensor, n)
		for j, p := range got {
			part, err := p.(*Tensor).Slice(0, int64(me)*rows, int64(me+1)*rows)
			if err != nil {
				return nil, err
			}
			parts[j] = part
		}
		t, err := Concat(0, parts...)
		if err != nil {
			return nil, err
		}
		return Args{outSlot: {t}}, nil
	}
	return nil, fmt.Errorf("%s: the simulator has no collective %s", op, op.Type)
}

// checkNranks refuses a gather or split whose nranks attr, which its
// declared output shape follows, is not the size of its group: Paddle's
// kernels refuse it too.
func checkNranks(op *ir.Op, g []int) error {
	if op.Attrs.Get("nranks") == nil {
		return nil // only a written nranks is held to the group (the table's default is 1)
	}
	if n := attrInt(op, "nranks", int64(len(g))); n != int64(len(g)) {
		ring := attrInt(op, "ring_id", 0)
		return fmt.Errorf("%s: nranks %d, but ring %d's group %v has %d ranks", op, n, ring, g, len(g))
	}
	return nil
}

// reduceMembers combines the members' tensors elementwise, in group order, so
// that every rank computes bit-identical results.
func reduceMembers(typ string, got []any) *Tensor {
	out := got[0].(*Tensor).Clone()
	for _, p := range got[1:] {
		t := p.(*Tensor)
		for i, v := range t.Data {
			switch typ {
			case "c_allreduce_sum", "c_allreduce_avg":
				out.Data[i] += v
			case "c_allreduce_prod":
				out.Data[i] *= v
			case "c_allreduce_max":
				out.Data[i] = math.Max(out.Data[i], v)
			case "c_allreduce_min":
				out.Data[i] = math.Min(out.Data[i], v)
			}
		}
	}
	if typ == "c_allreduce_avg" {
		for i := range out.Data {
			out.Data[i] /= float64(len(got))
		}
	}
	out.round()
	return out
}

// moe runs global_scatter or global_gather: every member contributes its
// rows and counts, and each computes its own output from all of them.
// A member with no rows still joins, so no rank waits for one that
// skipped the exchange.
func (r *rankRun) moe(op *ir.Op, in Args) (Args, error) {
	g, me, err := r.group(op)
	if err != nil {
		return nil, err
	}
	p, err := moeInputs(op, in, len(g))
	if err != nil {
		return nil, err
	}
	ringID := attrInt(op, "ring_id", 0)
	call := &Call{Rank: r.rank, Group: g, OpID: op.ID, OpType: op.Type,
		Kind:      fmt.Sprintf("%s/%d", op.Type, ringID),
		Signature: fmt.Sprintf("%s[*,%d] counts %d", p.x.DType, p.x.Shape[1], len(p.local)),
		Payload:   p, Origin: origin(op)}
	got, err := r.comm.Meet(call)
	if err != nil {
		return nil, err
	}
	parts := make([]moePart, len(got))
	for i, x := range got {
		parts[i] = x.(moePart)
	}
	t, err := moeExchange(op, op.Type == "global_scatter", me, parts, g)
	if err != nil {
		return nil, fmt.Errorf("rank %d: %w", r.rank, err)
	}
	return Args{slotOf(op.Outputs, "Out", "out"): {t}}, nil
}
