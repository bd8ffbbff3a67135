package sim

import "github.com/distpass/distpass/ir"

// commSetupTypes are Paddle's communicator set-up ops, which the startup
// programs of partition -all -format pdmodel begin with (interop/paddle's
// AddCommSetup): c_gen_nccl_id makes a ring's communicator id, a RAW var,
// and c_comm_init the communicator from it. They move no tensor, and the
// simulator's communicators need no set-up: an SPMD run takes them as
// no-ops, the id a 0-D placeholder.
var commSetupTypes = []string{"c_gen_nccl_id", "c_comm_init"}

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
