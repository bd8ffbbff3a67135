package sim

import "github.com/distpass/distpass/ir"

// commSetup runs Paddle's communicator set-up ops (ops.CommSetupTypes):
// the simulator's communicators need no set-up, so they are no-ops, the
// communicator id a 0-D placeholder.
func commSetup(op *ir.Op, _ Args) (Args, error) {
	out := Args{}
	for _, s := range op.Outputs {
		ts := make([]*Tensor, len(s.Args))
		for i := range ts {
			ts[i] = Zeros(ir.I32)
		}
		out[s.Name] = ts
	}
	return out, nil
}
