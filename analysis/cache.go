package analysis

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/distpass/distpass/ir"
)

// A Cache computes analysis results for one module on demand, once each,
// and keeps them until they are invalidated.
//
// Results are keyed by Analyzer.Name. An error from Run is kept like a
// result: analyses are deterministic, so running a failed one again on
// the same module would fail again, at full cost, for every pass that
// asks; the error goes when the result would (Invalidate, SetModule).
// When a requirement fails, the analyzers that require it fail too, with
// an error that wraps the requirement's.
//
// A Cache is safe for concurrent use. A mutex guards its tables but is not
// held while an analysis runs: goroutines asking for different analyses
// compute them in parallel, and those asking for one that is being
// computed wait for it, so each runs once. Invalidate and SetModule are
// meant to be called between passes, when no Get is in flight; an
// analysis in flight when they are called is dropped from the cache, and
// its result goes only to the callers already waiting for it.
type Cache struct {
	mu      sync.Mutex
	m       *ir.Module
	entries map[string]*entry
	stats   map[string]*Stat
	valid   map[*Analyzer]bool // analyzers whose requirement graph passed Validate
}

type entry struct {
	a      *Analyzer
	done   chan struct{} // closed when result and err are set
	result any
	err    error
}

func (e *entry) finished() bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

// Stat counts, for one analyzer name, the Gets answered from the cache
// (Hits, including those made to satisfy a dependent's Requires), the
// Gets that ran the analysis (Misses), and the total time spent in Run.
type Stat struct {
	Name   string
	Hits   int
	Misses int
	Time   time.Duration
}

// NewCache returns an empty cache for m.
func NewCache(m *ir.Module) *Cache {
	return &Cache{
		m:       m,
		entries: make(map[string]*entry),
		stats:   make(map[string]*Stat),
		valid:   make(map[*Analyzer]bool),
	}
}

// Module returns the module the cache describes.
func (c *Cache) Module() *ir.Module {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m
}

// Get returns the result of a for the cache's module, running a (and
// what it requires) unless the result is cached. The first Get of an
// analyzer value checks it and its requirements with Validate.
func (c *Cache) Get(a *Analyzer) (any, error) {
	if a == nil {
		return nil, errors.New("analysis: Get of a nil analyzer")
	}
	c.mu.Lock()
	if !c.valid[a] {
		if err := Validate([]*Analyzer{a}); err != nil {
			c.mu.Unlock()
			return nil, err
		}
		c.valid[a] = true
	}
	c.mu.Unlock()
	return c.get(a)
}

// Get is Cache.Get with the result's type asserted: a result that is not
// a T is an error, not a panic.
func Get[T any](c *Cache, a *Analyzer) (T, error) {
	var zero T
	v, err := c.Get(a)
	if err != nil {
		return zero, err
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("%s: result is %T, not %v", a, v, reflect.TypeFor[T]())
	}
	return t, nil
}

func (c *Cache) get(a *Analyzer) (any, error) {
	c.mu.Lock()
	st := c.stat(a.Name)
	if e, ok := c.entries[a.Name]; ok {
		st.Hits++
		c.mu.Unlock()
		<-e.done
		return e.result, e.err
	}
	st.Misses++
	e := &entry{a: a, done: make(chan struct{})}
	c.entries[a.Name] = e
	m := c.m
	c.mu.Unlock()
	c.compute(e, m)
	return e.result, e.err
}

func (c *Cache) compute(e *entry, m *ir.Module) {
	a := e.a
	completed := false
	defer func() {
		if !completed {
			// Run panicked. Forget the entry, so that the panic is not
			// mistaken for a fact about the module, and release anyone
			// waiting for it with an error; the panic goes on up.
			e.result, e.err = nil, fmt.Errorf("%s: panic in Run", a)
			c.mu.Lock()
			if c.entries[a.Name] == e {
				delete(c.entries, a.Name)
			}
			c.mu.Unlock()
		}
		close(e.done)
	}()
	pass := &Inputs{Module: m, Analyzer: a, results: make([]any, len(a.Requires))}
	for i, r := range a.Requires {
		res, err := c.get(r)
		if err != nil {
			e.err = fmt.Errorf("%s: %w", a, err)
			completed = true
			return
		}
		pass.results[i] = res
	}
	start := time.Now()
	res, err := a.Run(pass)
	elapsed := time.Since(start)
	if err != nil {
		e.err = fmt.Errorf("%s: %w", a, err)
	} else {
		e.result = res
	}
	c.mu.Lock()
	c.stat(a.Name).Time += elapsed
	c.mu.Unlock()
	completed = true
}

// stat returns the counters of name; c.mu must be held.
func (c *Cache) stat(name string) *Stat {
	st := c.stats[name]
	if st == nil {
		st = &Stat{Name: name}
		c.stats[name] = st
	}
	return st
}

// Invalidate drops every result except those of preserved, and drops a
// preserved one too when it requires, directly or transitively, one that
// is dropped: a fact computed from a stale fact is stale.
func (c *Cache) Invalidate(preserved ...*Analyzer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(preserved) == 0 {
		clear(c.entries)
		return
	}
	keep := make(map[string]bool, len(preserved))
	for _, a := range preserved {
		if a != nil {
			keep[a.Name] = true
		}
	}
	// kept[name]: 0 unknown, 1 kept, 2 dropped. Requires is acyclic
	// (Get validated it), so the recursion ends.
	kept := make(map[string]uint8, len(c.entries))
	var isKept func(name string) bool
	isKept = func(name string) bool {
		switch kept[name] {
		case 1:
			return true
		case 2:
			return false
		}
		e, ok := c.entries[name]
		ok = ok && keep[name] && e.finished()
		if ok {
			for _, r := range e.a.Requires {
				if !isKept(r.Name) {
					ok = false
					break
				}
			}
		}
		kept[name] = 2
		if ok {
			kept[name] = 1
		}
		return ok
	}
	var drop []string
	for name := range c.entries {
		if !isKept(name) {
			drop = append(drop, name)
		}
	}
	for _, name := range drop {
		delete(c.entries, name)
	}
}

// InvalidateAll drops every result.
func (c *Cache) InvalidateAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
}

// Cached reports whether the result of a (by name) is in the cache,
// computed.
func (c *Cache) Cached(a *Analyzer) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[a.Name]
	return ok && e.finished()
}

// SetModule makes m the module the cache describes and drops every
// result, even when m is the module it had (a pass may have changed it in
// place). The counters are kept: they describe the whole run.
func (c *Cache) SetModule(m *ir.Module) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = m
	clear(c.entries)
}

// Stats returns the counters of every analyzer the cache was asked for,
// sorted by name.
func (c *Cache) Stats() []Stat {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Stat, 0, len(c.stats))
	for _, st := range c.stats {
		out = append(out, *st)
	}
	slices.SortFunc(out, func(a, b Stat) int { return strings.Compare(a.Name, b.Name) })
	return out
}
