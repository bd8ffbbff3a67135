package analysis

import (
	"strconv"

	"github.com/distpass/distpass/ir"
)

// OpRef locates an op within its program: the index of its block and its
// position in the block's op list. It stays valid while the result that
// handed it out is cached, since any pass that moves ops invalidates it.
type OpRef struct {
	Block, Pos int32
}

// Op returns the op ref points at in p, or nil when there is none.
func (r OpRef) Op(p *ir.Program) *ir.Op {
	b := p.Block(int(r.Block))
	if b == nil || r.Pos < 0 || int(r.Pos) >= len(b.Ops) {
		return nil
	}
	return b.Ops[r.Pos]
}

// String returns "block B op #P".
func (r OpRef) String() string {
	return "block " + strconv.Itoa(int(r.Block)) + " op #" + strconv.Itoa(int(r.Pos))
}

// VarID identifies a declared var: its program, the block that declares
// it, and its name. An arg that names a var through the parent chain (a
// use in block 1 of a var of block 0) has the declaring block's VarID.
// The zero VarID is no var.
type VarID struct {
	Prog  *ir.Program
	Block int
	Name  string
}
