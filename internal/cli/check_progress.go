package cli

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/ops"
)

// checkWatch shows a check's progress on the status line and times it:
// the wall time of each stage, and the simulator's time per op type. It
// exists only on a terminal (nil otherwise, which does nothing), so a
// piped check reads no clock per op.
type checkWatch struct {
	st     *status
	last   time.Time // when the current phase began
	phase  string
	phases []phaseTime // in the order they began

	mu  sync.Mutex // the ranks time their ops at once
	ops map[string]*opTimes
}

type phaseTime struct {
	name string
	d    time.Duration
}

type opTimes struct {
	d time.Duration
	n int
}

// watchCheck returns a watch on st, nil when st is (not a terminal), and
// sets opts' hooks to it. What runs before the check's first event is
// the phase "partition", or, given check's -parts or -pipeline, "parts"
// (reading and verifying them) or "pipeline".
func watchCheck(st *status, opts *check.Options, parts, pipeline string) *checkWatch {
	if st == nil {
		return nil
	}
	first := "partition"
	if parts != "" {
		first = "parts"
	} else if pipeline != "" {
		first = "pipeline"
	}
	w := &checkWatch{st: st, last: time.Now(), phase: first, ops: map[string]*opTimes{}}
	opts.Progress = w.event
	opts.OpTime = w.opTime
	return w
}

func (w *checkWatch) event(ev check.Event) {
	w.enter(ev.Stage)
	switch {
	case ev.Stage == "partition":
		w.st.show("check: partition: lowered %d/%d", ev.Done, ev.Total)
	case ev.Stage == "serial":
		w.st.show("check: serial step %d/%d", ev.Step, ev.Steps)
	case ev.Stage == "spmd" && ev.Step == 0:
		w.st.show("check: spmd startup, %d ranks", ev.Total)
	case ev.Stage == "spmd" && ev.Rank < 0:
		w.st.show("check: spmd step %d/%d: %d ranks running", ev.Step, ev.Steps, ev.Total)
	case ev.Stage == "spmd":
		// The ranks run at once and end in any order: count them, and
		// name the last one done.
		w.st.show("check: spmd step %d/%d: %d/%d ranks done, last rank %d", ev.Step, ev.Steps, ev.Done, ev.Total, ev.Rank)
	case ev.Stage == "compare":
		w.st.show("check: compare after step %d/%d", ev.Step, ev.Steps)
	default:
		w.st.show("check: %s", ev.Stage)
	}
}

// enter ends the current phase when stage is another.
func (w *checkWatch) enter(stage string) {
	if stage == w.phase {
		return
	}
	w.endPhase()
	w.phase = stage
}

func (w *checkWatch) endPhase() {
	now := time.Now()
	d := now.Sub(w.last)
	w.last = now
	for i := range w.phases {
		if w.phases[i].name == w.phase {
			w.phases[i].d += d
			return
		}
	}
	w.phases = append(w.phases, phaseTime{w.phase, d})
}

func (w *checkWatch) opTime(_ int, op *ir.Op, d time.Duration) {
	w.mu.Lock()
	t := w.ops[op.Type]
	if t == nil {
		t = &opTimes{}
		w.ops[op.Type] = t
	}
	t.d += d
	t.n++
	w.mu.Unlock()
}

// summaryOps is how many op types a line of the summary names.
const summaryOps = 5

// summary writes where the time went: the wall time of the check and of
// each phase, then the op types the simulator spent the most kernel time
// in, serial and every rank's summed (so more than the wall time when
// ranks ran at once), with how many times each ran. The collectives come
// on a line of their own: their time is mostly waiting for the other
// members, which compute meanwhile.
func (w *checkWatch) summary(out io.Writer) {
	if w == nil {
		return
	}
	w.endPhase()
	var total time.Duration
	parts := make([]string, len(w.phases))
	for i, p := range w.phases {
		total += p.d
		parts[i] = p.name + " " + seconds(p.d)
	}
	fmt.Fprintf(out, "check: %s: %s\n", seconds(total), strings.Join(parts, ", "))
	w.mu.Lock()
	defer w.mu.Unlock()
	var kernels, collectives []string
	for typ := range w.ops {
		if ops.IsCollective(typ) {
			collectives = append(collectives, typ)
		} else {
			kernels = append(kernels, typ)
		}
	}
	if len(kernels) > 0 {
		fmt.Fprintf(out, "check: slowest ops, serial and all ranks summed: %s\n", w.top(kernels))
	}
	if len(collectives) > 0 {
		fmt.Fprintf(out, "check: collectives, waits included: %s\n", w.top(collectives))
	}
}

// top lists the summaryOps types that took the most time, the most
// first (ties by name), each with its time and how many times it ran.
func (w *checkWatch) top(types []string) string {
	slices.SortFunc(types, func(a, b string) int {
		return cmp.Or(cmp.Compare(w.ops[b].d, w.ops[a].d), strings.Compare(a, b))
	})
	var sb strings.Builder
	for i, typ := range types[:min(len(types), summaryOps)] {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "%s %s (%d)", typ, seconds(w.ops[typ].d), w.ops[typ].n)
	}
	return sb.String()
}

// seconds prints d to a tenth of a second, or of a millisecond, or to
// the microsecond: a check on a small module takes milliseconds.
func seconds(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%dµs", d.Microseconds())
}
