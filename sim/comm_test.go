package sim

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCommMeets(t *testing.T) {
	c := NewComm(2 * time.Second)
	group := []int{0, 1, 2}
	got := make([][]any, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 2 { // two collectives in a row pair up in order
				out, err := c.Meet(&Call{Rank: r, Group: group, OpID: int64(10 + k), OpType: "c_allreduce_sum", Kind: "sum/0", Signature: "f64[2]", Payload: r*10 + k})
				if err != nil {
					errs[r] = err
					return
				}
				got[r] = append(got[r], out...)
			}
		}()
	}
	wg.Wait()
	for r := range 3 {
		if errs[r] != nil {
			t.Fatal(errs[r])
		}
		want := []any{0, 10, 20, 1, 11, 21}
		for i := range want {
			if got[r][i] != want[i] {
				t.Fatalf("rank %d got %v, want %v", r, got[r], want)
			}
		}
	}
}

func TestCommMismatch(t *testing.T) {
	c := NewComm(2 * time.Second)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sig := "f64[2]"
			if r == 1 {
				sig = "f64[3]"
				time.Sleep(20 * time.Millisecond) // rank 0 arrives first
			}
			_, errs[r] = c.Meet(&Call{Rank: r, Group: []int{0, 1}, OpID: int64(5 + r), OpType: "c_allreduce_sum", Kind: "sum/0", Signature: sig})
		}()
	}
	wg.Wait()
	want := "collective mismatch on group [0 1]: rank 0 op 5 c_allreduce_sum (sum/0 f64[2]) against rank 1 op 6 c_allreduce_sum (sum/0 f64[3])"
	for r := range 2 {
		if errs[r] == nil || errs[r].Error() != want {
			t.Errorf("rank %d: err = %v\nwant %s", r, errs[r], want)
		}
	}
}

func TestCommSkippedCollective(t *testing.T) {
	// Rank 1 ends its program without the collective rank 0 waits in: the
	// wait fails at once, naming rank 1, long before the deadline.
	c := NewComm(time.Minute)
	start := time.Now()
	done := make(chan error)
	go func() {
		_, err := c.Meet(&Call{Rank: 0, Group: []int{0, 1}, OpID: 7, OpType: "c_allreduce_sum", Kind: "sum/1"})
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	c.Finish(1)
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "rank 1 finished its program without joining") {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("the skipped collective was found only at the deadline")
	}
	// A meeting started after the rank finished fails at once too.
	if _, err := c.Meet(&Call{Rank: 0, Group: []int{0, 1}, OpID: 8, OpType: "c_broadcast", Kind: "bcast"}); err == nil ||
		!strings.Contains(err.Error(), "rank 1 finished its program without joining") {
		t.Fatalf("err = %v", err)
	}
}

func TestCommDeadline(t *testing.T) {
	c := NewComm(50 * time.Millisecond)
	_, err := c.Meet(&Call{Rank: 2, Group: []int{0, 2, 3}, OpID: 9, OpType: "c_allgather", Kind: "gather/4"})
	want := "rank 2: op 9 c_allgather on group [0 2 3]: timed out after 50ms waiting for ranks [0 3]"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}

func TestCommForgetsMetCollectives(t *testing.T) {
	c := NewComm(time.Second)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if _, err := c.Meet(&Call{Rank: r, Group: []int{0, 1}, Kind: "k"}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := len(c.meetings); n != 0 {
		t.Fatalf("%d meetings kept after they met", n)
	}
}

// A timer that fires as the last member arrives finds the meeting met:
// it must leave it so, not close its done channel again (which panicked
// inside the lock and left every rank waiting on it: a deadlock that a
// 4096-rank check hit).
func TestMeetingEndsOnce(t *testing.T) {
	c := NewComm(time.Second)
	m := &meeting{calls: map[int]*Call{}, done: make(chan struct{})}
	c.end(m, nil) // every member met
	c.end(m, errors.New("timed out"))
	if m.err != nil {
		t.Fatalf("a met meeting failed: %v", m.err)
	}
	m = &meeting{calls: map[int]*Call{}, done: make(chan struct{})}
	c.end(m, errors.New("first"))
	c.end(m, errors.New("second"))
	if m.err == nil || m.err.Error() != "first" {
		t.Fatalf("err = %v, want the first error", m.err)
	}
}

// Ranks that wait for each other in two collectives (0 and 1 on [0 1],
// 2 on [1 2]) fail at once as a deadlock, long before the deadline, when
// the Comm knows how many ranks run.
func TestCommDeadlock(t *testing.T) {
	c := NewComm(time.Minute)
	c.Expect(3)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for r, g := range [][]int{{0, 1}, {0, 1, 2}, {1, 2}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r == 1 {
				time.Sleep(20 * time.Millisecond) // the others wait first
			}
			_, errs[r] = c.Meet(&Call{Rank: r, Group: g, OpID: int64(10 + r), OpType: "c_allreduce_sum", Kind: "sum/0"})
		}()
	}
	wg.Wait()
	if time.Since(start) > 10*time.Second {
		t.Fatal("the deadlock was found only at the deadline")
	}
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), ": deadlock: it waits for ranks ") {
			t.Errorf("rank %d: err = %v, want a deadlock", r, err)
		}
	}
}

// Many ranks meet in time linear in their number (each arrival is held
// to two members, not all), and a message about a large group lists a
// few of its ranks.
func TestCommManyRanks(t *testing.T) {
	const n = 4096
	group := make([]int, n)
	for r := range group {
		group[r] = r
	}
	c := NewComm(time.Minute)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			origin := int64(3)
			if r == n-1 {
				origin = 4 // the last rank runs another op
			}
			_, errs[r] = c.Meet(&Call{Rank: r, Group: group, OpID: 9, OpType: "c_allreduce_sum", Kind: "sum/0", Signature: "f32[2]", Origin: origin})
		}()
	}
	wg.Wait()
	var got error
	for _, err := range errs {
		if err != nil {
			got = err
			break
		}
	}
	const want = "collective mismatch on group [0 1 2 3 4 5 6 7 8 9 10 11 12 13 … 4094 4095] (4096 ranks): "
	if got == nil || !strings.HasPrefix(got.Error(), want) || !strings.Contains(got.Error(), "origin_op 4") {
		t.Fatalf("err = %v\nwant one starting %s and naming origin_op 4", got, want)
	}
}
