package par_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/distpass/distpass/internal/par"
)

func TestDoCallsEachItemOnce(t *testing.T) {
	for _, limit := range []int{0, 1, 3, 100} {
		const n = 1000
		var seen [n]atomic.Int32
		par.Do(n, limit, func(i int) { seen[i].Add(1) })
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Fatalf("limit %d: item %d called %d times", limit, i, c)
			}
		}
	}
}

func TestDoRaisesAWorkersPanicOnTheCaller(t *testing.T) {
	boom := errors.New("boom")
	defer func() {
		v := recover()
		p, ok := v.(*par.Panic)
		if !ok {
			t.Fatalf("recovered %T %v, want *par.Panic", v, v)
		}
		if !errors.Is(p, boom) || len(p.Stack) == 0 {
			t.Fatalf("panic %v: want the worker's error and its stack", p.Value)
		}
	}()
	par.Do(64, 4, func(i int) {
		if i == 17 {
			panic(boom)
		}
	})
	t.Fatal("Do returned after a worker panicked")
}

func TestChunksCoverTheRange(t *testing.T) {
	for _, n := range []int{0, 1, 5, 100, 1 << 16} {
		var covered atomic.Int64
		par.Chunks(n, 1<<10, func(lo, hi int) {
			if lo > hi {
				t.Errorf("n %d: range [%d, %d)", n, lo, hi)
			}
			covered.Add(int64(hi - lo))
		})
		if covered.Load() != int64(n) {
			t.Fatalf("n %d: chunks cover %d items", n, covered.Load())
		}
	}
}

func TestWorkerRunsEachItemInOrder(t *testing.T) {
	var got []int
	w := par.NewWorker(2, func(x int) { got = append(got, x) })
	for i := range 100 {
		w.Send(i)
	}
	w.Wait()
	for i, x := range got {
		if x != i {
			t.Fatalf("item %d is %d", i, x)
		}
	}
	if len(got) != 100 {
		t.Fatalf("%d items done, want 100", len(got))
	}
}

func TestWorkerRaisesItsPanicOnWait(t *testing.T) {
	w := par.NewWorker(1, func(x int) {
		if x == 3 {
			panic("boom")
		}
	})
	for i := range 50 { // more than the buffer: Send must not block after the panic
		w.Send(i)
	}
	defer func() {
		p, ok := recover().(*par.Panic)
		if !ok || p.Value != "boom" || len(p.Stack) == 0 {
			t.Fatalf("recovered %v, want the worker's *par.Panic", p)
		}
	}()
	w.Wait()
	t.Fatal("Wait returned")
}
