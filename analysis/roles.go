package analysis

import (
	"strconv"

	"github.com/distpass/distpass/ir"
)

// RoleClass is what the partitioner does with an op, decided by its role
// bits: lower it as forward, backward or optimize, or fail.
type RoleClass uint8

// The classes, in the order the partitioner tests them. Forward is role
// forward exactly; Loss forward|loss (the op that computes the loss);
// LossGrad backward|loss (the op that seeds the backward pass); Backward
// any other role with the backward bit; Optimize any other with the
// optimize bit (optimize|lrsched included); Other the rest (rpc, dist or
// lrsched alone), which no lowering accepts.
const (
	ClassForward RoleClass = iota
	ClassBackward
	ClassOptimize
	ClassLoss
	ClassLossGrad
	ClassOther
	NumRoleClasses
)

var classNames = [NumRoleClasses]string{"forward", "backward", "optimize", "loss", "loss-grad", "other"}

func (c RoleClass) String() string {
	if c < NumRoleClasses {
		return classNames[c]
	}
	return "roleclass(" + strconv.Itoa(int(c)) + ")"
}

// Classify returns the class of role r.
func Classify(r ir.Role) RoleClass {
	switch {
	case r == ir.RoleForward:
		return ClassForward
	case r.IsLoss():
		return ClassLoss
	case r.IsLossGrad():
		return ClassLossGrad
	case r.IsBackward():
		return ClassBackward
	case r.IsOptimize():
		return ClassOptimize
	}
	return ClassOther
}

// RoleCounts counts ops by class: counts[ClassForward] and so on.
type RoleCounts [NumRoleClasses]int

// BlockRoles is what Roles knows about one block.
type BlockRoles struct {
	// FirstLoss is the position of the first loss op, or the number of
	// ops when there is none: Paddle's last_fwd_op_idx, the end of the
	// ops whose ids the partitioner's forward-op table holds.
	FirstLoss int
	// FirstLossGrad is the position of the first loss-grad op, or -1:
	// the default impl's data-parallel grad sync starts there.
	FirstLossGrad int
	Counts        RoleCounts
}

// Roles classifies the ops of every block by role.
var Roles = &Analyzer{
	Name: "roles",
	Doc: "Roles classifies ops as forward, backward, optimize, loss, loss-grad or other, " +
		"and finds the first loss and loss-grad op of each block.",
	Run: func(p *Inputs) (any, error) { return buildRoles(p.Module), nil },
}

// RoleInfo is the result of Roles.
type RoleInfo struct {
	progs []roleProg
}

type roleProg struct {
	p      *ir.Program
	blocks []BlockRoles
	total  RoleCounts
	others []OpRef
}

func buildRoles(m *ir.Module) *RoleInfo {
	r := &RoleInfo{}
	if m == nil {
		return r
	}
	for _, p := range m.Programs() {
		rp := roleProg{p: p, blocks: make([]BlockRoles, len(p.Blocks))}
		for bi, b := range p.Blocks {
			br := &rp.blocks[bi]
			br.FirstLossGrad = -1
			if b == nil {
				continue
			}
			br.FirstLoss = len(b.Ops)
			for pos, op := range b.Ops {
				if op == nil {
					continue
				}
				c := Classify(op.Role)
				br.Counts[c]++
				switch c {
				case ClassLoss:
					br.FirstLoss = min(br.FirstLoss, pos)
				case ClassLossGrad:
					if br.FirstLossGrad < 0 {
						br.FirstLossGrad = pos
					}
				case ClassOther:
					rp.others = append(rp.others, OpRef{int32(bi), int32(pos)})
				}
			}
			for c, n := range br.Counts {
				rp.total[c] += n
			}
		}
		r.progs = append(r.progs, rp)
	}
	return r
}

func (r *RoleInfo) prog(p *ir.Program) *roleProg {
	for i := range r.progs {
		if r.progs[i].p == p {
			return &r.progs[i]
		}
	}
	return nil
}

// Block returns what Roles knows about block of prog; the zero value
// (with FirstLossGrad -1) for a block that does not exist.
func (r *RoleInfo) Block(prog *ir.Program, block int) BlockRoles {
	rp := r.prog(prog)
	if rp == nil || block < 0 || block >= len(rp.blocks) {
		return BlockRoles{FirstLossGrad: -1}
	}
	return rp.blocks[block]
}

// Counts returns the op counts by class over all blocks of prog.
func (r *RoleInfo) Counts(prog *ir.Program) RoleCounts {
	if rp := r.prog(prog); rp != nil {
		return rp.total
	}
	return RoleCounts{}
}

// Others returns the ops of prog of class Other, in program order: the
// ops the partitioner must reject. The slice must not be modified.
func (r *RoleInfo) Others(prog *ir.Program) []OpRef {
	if rp := r.prog(prog); rp != nil {
		return rp.others[:len(rp.others):len(rp.others)]
	}
	return nil
}
