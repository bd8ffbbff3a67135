package viz

import (
	"github.com/distpass/distpass/ir"
)

// roleClass is the colour class of an op.
type roleClass uint8

// The colour classes, in the order roleClassOf tests them.
const (
	classLoss     roleClass = iota // forward|loss: computes the loss
	classLossGrad                  // backward|loss: seeds the backward pass
	classOptimize                  // any role with the optimize bit (optimize, optimize|lrsched)
	classBackward                  // any other role with the backward bit
	classForward                   // exactly forward
	classOther                     // rpc, dist, lrsched alone, unknown bits
)

// roleFill is the fill colour of each class: light tints, so that the
// black labels stay readable and a collective's red border stands out.
var roleFill = [...]string{
	classLoss:     "#f4a6bd", // pink
	classLossGrad: "#f9d3df", // pale pink
	classOptimize: "#c9e7c4", // green
	classBackward: "#fdd9b0", // orange
	classForward:  "#cfe2f3", // blue
	classOther:    "#e3e3e3", // grey
}

func roleClassOf(r ir.Role) roleClass {
	switch {
	case r.IsLoss():
		return classLoss
	case r.IsLossGrad():
		return classLossGrad
	case r.IsOptimize():
		return classOptimize
	case r.IsBackward():
		return classBackward
	case r == ir.RoleForward:
		return classForward
	}
	return classOther
}

// The other colours of a drawing.
const (
	collectiveColor = "#d62728" // border of a collective op
	reshardColor    = "#9467bd" // border of a reshard op
	paramFill       = "#fff2a8" // param vars
	persistFill     = "#e8e8e8" // other persistable vars
	faintColor      = "#8c8c8c" // undeclared and outer vars, sub-block edges, cluster borders
	noteFill        = "#fff59d" // the note on cuts and missing blocks
)
