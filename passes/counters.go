package passes

import (
	"fmt"
	"io"
	"strings"

	"github.com/distpass/distpass/ir"
)

// Counters reports, for every execution, the ops the pass added, removed
// and changed (by op id and a per-op structural hash, across all
// programs) and the counters the pass reported through Context.Count, as
// a table printed when the pipeline ends.
type Counters struct {
	NopInstrument
	W io.Writer

	before map[*Execution]map[opKey]uint64 // per open execution: nested ones nest
	rowOf  map[*Execution]int
	rows   []counterRow // in the order executions start
}

type opKey struct {
	prog string
	id   int64
}

type counterRow struct {
	e                       *Execution
	added, removed, changed int
}

func opHashes(m *ir.Module) map[opKey]uint64 {
	hs := make(map[opKey]uint64)
	for _, p := range m.Programs() {
		for _, b := range p.Blocks {
			for _, op := range b.Ops {
				hs[opKey{p.Name, op.ID}] = ir.HashOp(op)
			}
		}
	}
	return hs
}

func (c *Counters) BeforePipeline(*RunInfo, *ir.Module) error {
	c.rows, c.before, c.rowOf = nil, map[*Execution]map[opKey]uint64{}, map[*Execution]int{}
	return nil
}

func (c *Counters) BeforePass(e *Execution, m *ir.Module) error {
	c.before[e] = opHashes(m)
	c.rowOf[e] = len(c.rows)
	c.rows = append(c.rows, counterRow{e: e})
	return nil
}

func (c *Counters) AfterPass(e *Execution, m *ir.Module, _ error) error {
	before, after := c.before[e], opHashes(m)
	delete(c.before, e)
	row := &c.rows[c.rowOf[e]]
	for k, h := range after {
		if old, ok := before[k]; !ok {
			row.added++
		} else if old != h {
			row.changed++
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			row.removed++
		}
	}
	return nil
}

func (c *Counters) AfterPipeline(info *RunInfo, _ *ir.Module, _ error) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "pass counters for %s\n", info.Text)
	fmt.Fprintf(&sb, "%7s %7s %7s  %s\n", "added", "removed", "changed", "pass")
	for _, r := range c.rows {
		fmt.Fprintf(&sb, "%7d %7d %7d  %s%s", r.added, r.removed, r.changed, strings.Repeat("  ", r.e.Depth()), r.e.Label())
		for _, ct := range r.e.Counters() {
			fmt.Fprintf(&sb, " %s=%d", ct.Name, ct.Value)
		}
		sb.WriteByte('\n')
	}
	_, err := io.WriteString(c.W, sb.String())
	return err
}
