package corpus

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"

	"github.com/distpass/distpass/ir"
)

// Canon returns the canonical dataflow form of m, a module partitioned
// (or otherwise transformed) from serial: sorted lines, one a fact, that
// do not depend on the order of independent ops, nor on the names and ids
// that order decides. Two modules with the same form compute the same
// values for every var of serial, with the same ops.
//
// The facts:
//   - the module's header: name, attrs, meshes, groups, params-grads, and
//     each program's rank;
//   - each op, printed with its type, attrs, role and dist, its id if it
//     is one of serial's (ids the lowering hands out follow emission
//     order), and each input arg replaced by where its value comes from:
//     the op of the same block that last wrote it before, by that op's
//     own canonical line's hash and the output slot ("%1a2b….Out#0"), or
//     the block's input ("in:NAME"). As that hash covers the producer's
//     inputs in turn, an op's line pins the whole graph upstream of it;
//     an in-place update (sgd's ParamOut = Param) is a new version, not
//     the same value;
//   - for each block, which op last writes each var of serial;
//   - each var declaration.
//
// Names of serial are kept; every other name (the temps FreshName hands
// out in emission order) is replaced by its first definition, "temp"
// where it is written and "%hash.Slot#i" where it is read. What the form
// leaves out is the order itself: of collectives too, which must only
// agree between ranks (the simulator checks that by running them).
func Canon(m, serial *ir.Module) []string {
	kept := map[string]bool{}
	var maxID int64
	for _, p := range serial.Programs() {
		for _, b := range p.Blocks {
			for _, v := range b.Vars() {
				kept[v.Name()] = true
			}
			for _, op := range b.Ops {
				maxID = max(maxID, op.ID)
			}
		}
	}
	header := &ir.Module{Name: m.Name, Attrs: m.Attrs, Meshes: m.Meshes, Groups: m.Groups, ParamGrads: m.ParamGrads}
	lines := []string{"header\n" + string(ir.Print(header))}
	for _, p := range m.Programs() {
		lines = append(lines, canonProgram(p, kept, maxID)...)
	}
	slices.Sort(lines)
	return lines
}

func canonProgram(p *ir.Program, kept map[string]bool, maxID int64) []string {
	lines := []string{fmt.Sprintf("program %s rank %d blocks %d", p.Name, p.Rank, len(p.Blocks))}
	tempDef := map[string]string{} // a temp's first definition
	newOp := map[int64]string{}    // an id the lowering handed out: its op's hash
	// Ops and vars are rewritten on one clone of the program: cloning
	// each on its own costs a slab apiece.
	pc := p.Clone()
	for bi, b := range p.Blocks {
		at := fmt.Sprintf("program %s block %d parent %d forward %d: ", p.Name, b.Index, b.Parent, b.Forward)
		reach := map[string]string{} // a var's last writer in this block so far
		source := func(a string) string {
			if t, ok := reach[a]; ok {
				return t
			}
			if kept[a] {
				return "in:" + a
			}
			if t, ok := tempDef[a]; ok {
				return "in:" + t
			}
			return "in:temp?"
		}
		written := func(a string) string {
			if kept[a] {
				return a
			}
			return "temp"
		}
		for oi, op := range b.Ops {
			c := pc.Blocks[bi].Ops[oi]
			for _, s := range c.Inputs {
				for j, a := range s.Args {
					s.Args[j] = source(a)
				}
			}
			for _, s := range c.Outputs {
				for j, a := range s.Args {
					s.Args[j] = written(a)
				}
			}
			for i, a := range c.Attrs {
				switch v := a.Value.(type) {
				case ir.VarRef:
					c.Attrs[i].Value = ir.VarRef(source(string(v)))
				case ir.VarRefs:
					for j := range v {
						v[j] = source(v[j])
					}
				}
			}
			if d := c.Dist; d != nil {
				for i := range d.Inputs {
					d.Inputs[i].Name = source(d.Inputs[i].Name)
				}
				for i := range d.Outputs {
					d.Outputs[i].Name = written(d.Outputs[i].Name)
				}
			}
			fwd := ""
			if c.ID > maxID {
				c.ID = 0
			}
			if c.Fwd > maxID {
				fwd = " fwd-new:" + newOp[c.Fwd]
				c.Fwd = 0
			}
			line := ir.PrintOp(c) + fwd
			h := hash(line)
			if op.ID > maxID {
				newOp[op.ID] = h
			}
			lines = append(lines, at+"op "+line)
			for _, s := range op.Outputs {
				for j, a := range s.Args {
					t := "%" + h + "." + s.Name + "#" + strconv.Itoa(j)
					reach[a] = t
					if _, ok := tempDef[a]; !ok && !kept[a] {
						tempDef[a] = t
					}
				}
			}
		}
		for a, t := range reach {
			if kept[a] {
				lines = append(lines, at+"final "+a+" = "+t)
			}
		}
	}
	for _, b := range pc.Blocks {
		for _, v := range b.Vars() {
			c := *v // printed under its canonical name: temps may share one
			if !kept[c.Name()] {
				if t, ok := tempDef[c.Name()]; ok {
					c = c.Named("temp " + t)
				} else {
					c = c.Named("temp?")
				}
			}
			lines = append(lines, fmt.Sprintf("program %s block %d: %s", p.Name, b.Index, ir.PrintVar(&c)))
		}
	}
	return lines
}

func hash(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return strconv.FormatUint(h.Sum64(), 36)
}
