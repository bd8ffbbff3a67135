package paddle

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// Communicator set-up.
//
// A rank's programs name their process groups by ring_id, the ids of the
// module's group table; Paddle's executor runs a collective only on a
// communicator its startup program created. AddCommSetup makes a rank's
// startup program create every one its programs use, as Paddle's own
// collective set-up does: for each ring, a c_gen_nccl_id, which the
// group's first rank runs to make the id and send it to the others'
// endpoints, and the others to receive it on their own, writing it to a
// persistable RAW var; then a c_comm_init, which makes the communicator
// of the ring from that id. The rings go in ascending id order on every
// rank: communicators created in different orders on different ranks
// wait on each other forever (Paddle PR #68847).

// CommIDVar is the name of the RAW var that holds ring ring's
// communicator id in a startup program AddCommSetup made.
func CommIDVar(ring int) string { return "comm_id@ring" + strconv.Itoa(ring) }

// RingsUsed returns the ring ids the ops of m's programs name (their
// ring_id attrs), ascending.
func RingsUsed(m *ir.Module) []int {
	var rings []int
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			if b == nil {
				continue
			}
			for _, op := range b.Ops {
				if slices.Contains(ops.CommSetupTypes, op.Type) {
					continue
				}
				if r, ok := ir.AsInt(ops.AttrValue(op, "ring_id")); ok && !slices.Contains(rings, int(r)) {
					rings = append(rings, int(r))
				}
			}
		}
	}
	slices.Sort(rings)
	return rings
}

// AddCommSetup prepends to the startup program of m, the module of one
// rank (m.Main.Rank), a c_gen_nccl_id and a c_comm_init for every ring
// its programs use, in ascending ring id order, making a startup program
// when m has none. endpoint gives each rank's host:port, the one its
// c_gen_nccl_id listens on (or sends from, the group's first rank); the
// communicator's rank is the rank's index in the group, nranks the
// group's size. A ring that names no group, or a group without the rank,
// is an error; so is a module that already sets a ring up, or has a var
// of the name CommIDVar gives.
func AddCommSetup(m *ir.Module, endpoint func(rank int) (string, error)) error {
	rank := m.Main.Rank
	if rank < 0 {
		return fmt.Errorf("paddle: communicator set-up: the module is serial, not a rank's")
	}
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			for _, op := range b.Ops {
				if slices.Contains(ops.CommSetupTypes, op.Type) {
					return fmt.Errorf("paddle: rank %d: %s program op %d %s: the communicators are set up already", rank, p.Name, op.ID, op.Type)
				}
			}
		}
	}
	rings := RingsUsed(m)
	if len(rings) == 0 {
		return nil
	}
	if m.Startup == nil {
		m.Startup = &ir.Program{Name: "startup", Rank: rank}
		m.Startup.AddBlock(-1)
	}
	sb := m.Startup.Global()
	var next int64
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			for _, op := range b.Ops {
				next = max(next, op.ID)
			}
		}
	}
	var ops []*ir.Op
	for _, ring := range rings {
		g := m.Group(ring)
		if g == nil {
			return fmt.Errorf("paddle: rank %d: ring_id %d names no process group", rank, ring)
		}
		me := slices.Index(g.Ranks, rank)
		if me < 0 {
			return fmt.Errorf("paddle: rank %d: ring_id %d names group %v, which does not hold the rank", rank, ring, g.Ranks)
		}
		eps := make([]string, len(g.Ranks))
		for i, r := range g.Ranks {
			ep, err := endpoint(r)
			if err != nil {
				return err
			}
			eps[i] = ep
		}
		name := CommIDVar(ring)
		if sb.Var(name) != nil || m.Main.Global().Var(name) != nil {
			return fmt.Errorf("paddle: rank %d: var %s, the communicator id of ring %d, is declared already", rank, name, ring)
		}
		v := ir.Var{Kind: ir.KindPersist, Type: ir.NoShape(ir.Raw)}.Named(name)
		if err := sb.AddVar(&v); err != nil {
			return err
		}
		others := ir.Strings{}
		for i, ep := range eps {
			if i != me {
				others = append(others, ep)
			}
		}
		gen := &ir.Op{ID: next + 1, Type: "c_gen_nccl_id",
			Outputs: []ir.Slot{{Name: "Out", Args: []string{name}}},
			Attrs: ir.Attrs{
				ir.A("endpoint", ir.String(eps[me])),
				ir.A("other_endpoints", others),
				ir.A("rank", ir.Int(int64(me))),
				ir.A("ring_id", ir.Int(int64(ring))),
			}}
		initOp := &ir.Op{ID: next + 2, Type: "c_comm_init",
			Inputs: []ir.Slot{{Name: "X", Args: []string{name}}},
			Attrs: ir.Attrs{
				ir.A("device_id", ir.Int(-1)),
				ir.A("endpoints", ir.String(strings.Join(eps, ","))),
				ir.A("nranks", ir.Int(int64(len(g.Ranks)))),
				ir.A("rank", ir.Int(int64(me))),
				ir.A("ring_id", ir.Int(int64(ring))),
			}}
		next += 2
		ops = append(ops, gen, initOp)
	}
	sb.Ops = append(ops, sb.Ops...)
	return nil
}
