package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/distpass/distpass/internal/par"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// rankVar in a pipeline text makes it a pipeline per rank: html, run and
// check -pipeline run it once for every rank of the module's meshes, the
// rank written in its place, each on a copy of the module.
const rankVar = "$RANK"

// namesRank reports whether a pipeline text is one per rank.
func namesRank(text string) bool { return strings.Contains(text, rankVar) }

// rankRun is one run of a pipeline over its own copy of the module.
type rankRun struct {
	rank int // -1: the pipeline names no $RANK
	pl   *passes.Pipeline
	out  *ir.Module // the copy, after the run
	err  error      // the run's failure
}

// name is the run's name on a page and in messages.
func (r *rankRun) name() string { return "rank " + strconv.Itoa(r.rank) }

// parseRuns parses text with env's registry: one run, or with $RANK one
// per rank of m's meshes, in rank order. The rank set is m's: completion
// and the other passes add no mesh. A failure is printed, for command
// cmd on the input named file, and ok is false: exit 1.
func parseRuns(env *Env, cmd, file string, m *ir.Module, text string) (runs []*rankRun, ok bool) {
	reg := env.passRegistry()
	texts, ranks := []string{text}, []int{-1}
	if namesRank(text) {
		ranks = passes.Ranks(m)
		if len(ranks) == 0 {
			fmt.Fprintf(env.Stderr, "%s: the pipeline names %s but the module has no mesh\n", file, rankVar)
			return nil, false
		}
		texts = make([]string, len(ranks))
		for i, r := range ranks {
			texts[i] = strings.ReplaceAll(text, rankVar, strconv.Itoa(r))
		}
	}
	for i, t := range texts {
		pl, err := reg.Parse(t)
		if err != nil {
			// A pipeline that does not parse is bad input, as a module
			// that does not parse is: exit 1, with its position.
			fmt.Fprintf(env.Stderr, "distpass %s: %v\n", cmd, err)
			return nil, false
		}
		runs = append(runs, &rankRun{rank: ranks[i], pl: pl})
	}
	return runs, true
}

// runAll runs each run over its own clone of m, several at once, as
// partition -all lowers its ranks: insts gives run i's instruments (nil:
// none), which must not share a writer, and progress, when not nil, is
// called as each run ends, the calls in turn. m is not changed. Every
// run goes to its end, so which fail does not depend on timing.
func runAll(ctx context.Context, m *ir.Module, runs []*rankRun, insts func(i int) []passes.Instrument, progress func(done, total int)) {
	var mu sync.Mutex // orders the progress calls
	done := 0
	par.Do(len(runs), 0, func(i int) {
		r := runs[i]
		var is []passes.Instrument
		if insts != nil {
			is = insts(i)
		}
		c := m.Clone()
		r.err = (&passes.Manager{Instruments: is}).Run(ctx, r.pl, c)
		r.out = c
		if progress != nil {
			mu.Lock()
			done++
			progress(done, len(runs))
			mu.Unlock()
		}
	})
}

// where names the run in a message about the input named file.
func (r *rankRun) where(file string) string {
	if r.rank < 0 {
		return file
	}
	return file + ": " + r.name()
}

// firstFailed is the first run that failed, in rank order, or nil. A
// bad module fails alike on every rank, and one rank's error says it.
func firstFailed(runs []*rankRun) *rankRun {
	for _, r := range runs {
		if r.err != nil {
			return r
		}
	}
	return nil
}
