package sim

import (
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/distpass/distpass/ops"
)

// CheckTable reports, in one error, every way the op table and the
// simulator's kernels ks (DefaultKernels, with what Register added)
// fail what a definition promises: a kernel of a type the table does not
// define, or defines without an inference (what the simulator runs,
// verify must check); a type with a kernel and a gradient whose grad op
// type has no kernel; a collective without its traffic (ops.Def.Cost);
// and an op that is not a collective and has no sharding rule without
// saying why (ops.Def.NoRule). A type without a
// kernel is one verify checks and the simulator does not run (an
// imported program's): not a broken promise.
func CheckTable(ks Kernels) error {
	var errs []string
	for _, t := range slices.Sorted(maps.Keys(ks)) {
		switch d := ops.Lookup(t); {
		case d == nil:
			errs = append(errs, t+": a kernel, and the op table does not define it")
		case d.Infer == nil:
			errs = append(errs, t+": a kernel, and its definition infers nothing")
		}
	}
	for _, d := range ops.All() {
		collective := d.Traits&ops.Collective != 0
		if g := d.GradType(); g != "" && ks[d.Type] != nil && ks[g] == nil {
			errs = append(errs, d.Type+": a kernel and a gradient, and its grad op type "+g+" has no kernel")
		}
		if collective && d.Cost == nil {
			errs = append(errs, d.Type+": a collective without a Cost (what explain and check's traffic count)")
		}
		if !collective && d.Sharding == nil && d.NoRule == "" {
			errs = append(errs, d.Type+": no sharding rule, and no NoRule saying why")
		}
	}
	if errs != nil {
		return errors.New("sim: the op table and the kernels disagree:\n" + strings.Join(errs, "\n"))
	}
	return nil
}
