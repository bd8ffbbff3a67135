package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Comm is where the ranks of an SPMD run meet for collectives. Every rank
// runs in its own goroutine; the k-th collective a rank issues on a group
// meets the k-th collective of every other member on that group. The
// members must agree on what they do (Call.Kind and Call.Signature:
// op type, ring id, shape, dtype); each wait has a deadline, and a rank
// that finishes its program fails the meetings it never joined, so a
// mismatch is an error naming ranks and op ids, never a hang.
type Comm struct {
	deadline time.Duration

	mu       sync.Mutex
	meetings map[meetKey]*meeting
	seq      map[seqKey]int // per rank and group: collectives issued
	finished map[int]bool   // ranks whose program has ended
}

// Call is one rank's part in a collective.
type Call struct {
	Rank  int
	Group []int // ascending
	// OpID and OpType name the op in messages.
	OpID   int64
	OpType string
	// Kind must be equal on every member: the collective and its ring id.
	Kind string
	// Signature must be equal on every member where the collective needs
	// it (shape and dtype of an allreduce); "" skips the check.
	Signature string
	// Payload is what this rank contributes.
	Payload any
}

type meetKey struct {
	group string
	seq   int
}

type seqKey struct {
	rank  int
	group string
}

type meeting struct {
	calls map[int]*Call
	done  chan struct{}
	err   error
	read  int // members that took the result; at len(calls) it is forgotten
}

// NewComm returns a meeting place whose waits give up after deadline.
func NewComm(deadline time.Duration) *Comm {
	return &Comm{
		deadline: deadline,
		meetings: map[meetKey]*meeting{},
		seq:      map[seqKey]int{},
		finished: map[int]bool{},
	}
}

func groupKey(g []int) string {
	parts := make([]string, len(g))
	for i, r := range g {
		parts[i] = strconv.Itoa(r)
	}
	return strings.Join(parts, ",")
}

// Meet joins the collective and returns every member's payload in group
// order once all have arrived.
func (c *Comm) Meet(call *Call) ([]any, error) {
	if !slices.Contains(call.Group, call.Rank) {
		return nil, fmt.Errorf("rank %d: op %d %s: rank is not in its group %v", call.Rank, call.OpID, call.OpType, call.Group)
	}
	gk := groupKey(call.Group)
	c.mu.Lock()
	sk := seqKey{call.Rank, gk}
	mk := meetKey{gk, c.seq[sk]}
	c.seq[sk]++
	m := c.meetings[mk]
	if m == nil {
		m = &meeting{calls: map[int]*Call{}, done: make(chan struct{})}
		c.meetings[mk] = m
		for _, r := range call.Group {
			if c.finished[r] && r != call.Rank {
				m.err = peerGone{fmt.Errorf("rank %d: op %d %s on group %v: rank %d finished its program without joining", call.Rank, call.OpID, call.OpType, call.Group, r)}
				close(m.done)
				break
			}
		}
	}
	if m.err == nil {
		if first := anyCall(m.calls); first != nil {
			if first.Kind != call.Kind || first.Signature != call.Signature {
				a, b := first, call // lower rank first: the message does not depend on arrival order
				if b.Rank < a.Rank {
					a, b = b, a
				}
				m.err = fmt.Errorf("collective mismatch on group %v: rank %d op %d %s (%s %s) against rank %d op %d %s (%s %s)",
					call.Group, a.Rank, a.OpID, a.OpType, a.Kind, a.Signature,
					b.Rank, b.OpID, b.OpType, b.Kind, b.Signature)
				close(m.done)
			}
		}
	}
	if m.err == nil {
		m.calls[call.Rank] = call
		if len(m.calls) == len(call.Group) {
			close(m.done)
		}
	}
	c.mu.Unlock()

	timer := time.NewTimer(c.deadline)
	defer timer.Stop()
	select {
	case <-m.done:
	case <-timer.C:
		c.mu.Lock()
		if m.err == nil {
			var missing []int
			for _, r := range call.Group {
				if m.calls[r] == nil {
					missing = append(missing, r)
				}
			}
			m.err = fmt.Errorf("rank %d: op %d %s on group %v: timed out after %v waiting for ranks %v",
				call.Rank, call.OpID, call.OpType, call.Group, c.deadline, missing)
			close(m.done)
		}
		c.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.err != nil {
		return nil, m.err
	}
	out := make([]any, len(call.Group))
	for i, r := range call.Group {
		out[i] = m.calls[r].Payload
	}
	// A met collective is forgotten once every member has its result, so
	// a long run holds only the collectives in flight. Failed ones stay,
	// for late members to find their error.
	if m.read++; m.read == len(call.Group) {
		delete(c.meetings, mk)
	}
	return out, nil
}

// Finish records that rank's program has ended: meetings of its groups
// that still wait for it fail at once instead of at the deadline.
func (c *Comm) Finish(rank int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finished[rank] = true
	for _, m := range c.meetings {
		select {
		case <-m.done:
			continue
		default:
		}
		first := anyCall(m.calls)
		if first == nil || !slices.Contains(first.Group, rank) || m.calls[rank] != nil {
			continue
		}
		m.err = peerGone{fmt.Errorf("op %d %s on group %v: rank %d finished its program without joining (ranks %v waited)",
			first.OpID, first.OpType, first.Group, rank, sortedRanks(m.calls))}
		close(m.done)
	}
}

func anyCall(calls map[int]*Call) *Call {
	var first *Call
	for _, c := range calls {
		if first == nil || c.Rank < first.Rank {
			first = c
		}
	}
	return first
}

func sortedRanks(calls map[int]*Call) []int {
	rs := make([]int, 0, len(calls))
	for r := range calls {
		rs = append(rs, r)
	}
	slices.Sort(rs)
	return rs
}

// peerGone is the error of a collective a member never joined because
// its program ended (often on an error of its own, the one to report).
type peerGone struct{ error }

func (e peerGone) Unwrap() error { return e.error }
