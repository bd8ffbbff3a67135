package par

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// Panic is the value a helper panics with on the caller's goroutine when
// a worker panicked: the worker's value and stack.
type Panic struct {
	Value any
	Stack []byte
}

// Error is the worker's value, as a panic on the caller would print it.
func (p *Panic) Error() string { return fmt.Sprint(p.Value) }

// Unwrap returns the worker's value when it was an error.
func (p *Panic) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// Do calls f(i) for every i in [0, n), at most limit at once (limit < 1:
// GOMAXPROCS), and returns when all have returned. A panic of f is
// raised again on the caller's goroutine, as a *Panic, after the others
// have stopped; items not yet started are not started.
func Do(n, limit int, f func(i int)) {
	if limit < 1 {
		limit = runtime.GOMAXPROCS(0)
	}
	limit = min(limit, n)
	if limit <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var (
		mu     sync.Mutex
		next   int
		failed *Panic
		wg     sync.WaitGroup
	)
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if failed != nil || next == n {
			return 0, false
		}
		next++
		return next - 1, true
	}
	for range limit {
		wg.Go(func() {
			defer func() {
				if v := recover(); v != nil {
					mu.Lock()
					if failed == nil {
						failed = &Panic{Value: v, Stack: debug.Stack()}
					}
					mu.Unlock()
				}
			}()
			for i, ok := take(); ok; i, ok = take() {
				f(i)
			}
		})
	}
	wg.Wait()
	if failed != nil {
		panic(failed)
	}
}

// Chunks calls f on consecutive ranges [lo, hi) that cover [0, n): one
// range when n is below 2*minChunk, else one per core, at once.
func Chunks(n, minChunk int, f func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), max(1, n/minChunk))
	Do(workers, workers, func(w int) { f(n*w/workers, n*(w+1)/workers) })
}

// Worker runs a function on each item sent to it, in order, on one
// goroutine of its own, while the sender goes on: a two-stage pipeline.
// Wait raises a panic of the function on the caller's goroutine, as a
// *Panic; the items sent after the panic are dropped.
type Worker[T any] struct {
	ch     chan T
	done   chan struct{}
	failed *Panic
}

// NewWorker starts a Worker that calls do on each item, buffering up to
// buffer items that do has not taken yet.
func NewWorker[T any](buffer int, do func(T)) *Worker[T] {
	w := &Worker[T]{ch: make(chan T, buffer), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer func() {
			if v := recover(); v != nil {
				w.failed = &Panic{Value: v, Stack: debug.Stack()}
				for range w.ch { // drain, so that Send never blocks
				}
			}
		}()
		for x := range w.ch {
			do(x)
		}
	}()
	return w
}

// Send gives x to the worker; it blocks while the buffer is full.
func (w *Worker[T]) Send(x T) { w.ch <- x }

// Wait closes the worker to new items, waits until it has done every
// item sent, and raises its panic, if any, on the caller's goroutine.
func (w *Worker[T]) Wait() {
	close(w.ch)
	<-w.done
	if w.failed != nil {
		panic(w.failed)
	}
}
