package ir

import (
	"strconv"
)

// Role is an op's role bit set, with Paddle's OpRole values so that
// imported programs keep their numbers.
type Role uint32

// Paddle's role bits. RoleForward is zero: a forward op has no bit set.
const (
	RoleForward  Role = 0x0
	RoleBackward Role = 0x1
	RoleOptimize Role = 0x2
	RoleRPC      Role = 0x4
	RoleDist     Role = 0x8
	RoleLRSched  Role = 0x10
	RoleLoss     Role = 0x100

	roleKnown = RoleBackward | RoleOptimize | RoleRPC | RoleDist | RoleLRSched | RoleLoss
)

// roleBits lists the named bits in printing order.
var roleBits = []struct {
	bit  Role
	name string
}{
	{RoleBackward, "backward"},
	{RoleOptimize, "optimize"},
	{RoleRPC, "rpc"},
	{RoleDist, "dist"},
	{RoleLRSched, "lrsched"},
	{RoleLoss, "loss"},
}

// IsForward reports whether r is exactly forward, or forward|loss (the loss op).
func (r Role) IsForward() bool { return r == RoleForward || r == RoleLoss }

// IsBackward reports whether the backward bit is set.
func (r Role) IsBackward() bool { return r&RoleBackward != 0 }

// IsOptimize reports whether the optimize bit is set.
func (r Role) IsOptimize() bool { return r&RoleOptimize != 0 }

// IsLoss reports whether r is forward|loss: the op that computes the loss.
func (r Role) IsLoss() bool { return r == RoleLoss }

// IsLossGrad reports whether r is backward|loss: the op that seeds the
// backward pass with the loss gradient.
func (r Role) IsLossGrad() bool { return r == RoleBackward|RoleLoss }

// Valid reports whether r sets only Paddle's named bits.
func (r Role) Valid() bool { return r&^roleKnown == 0 }

// String spells r as in the text format: "forward", "backward|loss",
// "optimize|lrsched". The loss bit alone reads "forward|loss". Bits with no
// name (Paddle's kNotSpecified 0x1000, say, which an imported program may
// carry) follow the named ones as one hex number: "backward|0x1000", or
// "0x1000" alone. The parser reads them back; the verifier flags them.
func (r Role) String() string {
	if r == RoleForward {
		return "forward"
	}
	return string(r.appendText(nil))
}

// appendText appends the role's text, as String spells it, to b.
func (r Role) appendText(b []byte) []byte {
	start := len(b)
	if r == RoleForward || r == RoleLoss {
		b = append(b, "forward"...)
	}
	for _, rb := range roleBits {
		if r&rb.bit != 0 {
			if len(b) > start {
				b = append(b, '|')
			}
			b = append(b, rb.name...)
		}
	}
	if unknown := r &^ roleKnown; unknown != 0 {
		if len(b) > start {
			b = append(b, '|')
		}
		b = append(b, "0x"...)
		b = strconv.AppendUint(b, uint64(unknown), 16)
	}
	return b
}

// roleBit returns the bit named s; "forward" is the empty bit.
func roleBit(s string) (Role, bool) {
	if s == "forward" {
		return RoleForward, true
	}
	for _, rb := range roleBits {
		if rb.name == s {
			return rb.bit, true
		}
	}
	return 0, false
}
