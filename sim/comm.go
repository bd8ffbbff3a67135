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
// op type, ring id, shape, dtype) and, where they carry one, on which op
// it is (Call.Origin); a send_v2 must meet a recv_v2. Each wait has a
// deadline, and a rank that finishes its program fails the meetings it
// never joined, so a mismatch is an error naming ranks and op ids, never
// a hang.
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
	// Origin, when not 0, is the op's identity: its origin_op attr, the
	// serial op whose lowering emitted it. Members that all have one must
	// have the same, so that two same-shaped collectives a rank issues in
	// the wrong order fail where they meet.
	Origin int64
	// Peer is the other rank of a point-to-point call (send_v2 or
	// recv_v2, by OpType), which must meet the opposite kind.
	Peer int
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
				m.err = gone(call, r)
				close(m.done)
				break
			}
		}
	}
	if m.err == nil {
		// Against every member so far, in rank order: each may hold the
		// only origin another disagrees with.
		for _, r := range sortedRanks(m.calls) {
			if err := mismatch(m.calls[r], call); err != nil {
				m.err = err
				close(m.done)
				break
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
		m.err = gone(first, rank)
		close(m.done)
	}
}

// gone is the error of call, whose group member r finished its program
// without joining. Whether r finished before or after call arrived, the
// message is the same (the SPMD runner names the waiting rank).
func gone(call *Call, r int) error {
	if call.OpType == "send_v2" {
		return peerGone{fmt.Errorf("op %d send_v2 to rank %d (%s): rank %d finished its program without receiving it",
			call.OpID, call.Peer, call.Kind, r)}
	}
	return peerGone{fmt.Errorf("op %d %s on group %v: rank %d finished its program without joining",
		call.OpID, call.OpType, call.Group, r)}
}

func isP2P(c *Call) bool { return c.OpType == "send_v2" || c.OpType == "recv_v2" }

// describe spells a call in a mismatch: its rank, op, kind, signature and
// origin.
func (c *Call) describe() string {
	what := strings.TrimSpace(c.Kind + " " + c.Signature)
	if c.Origin != 0 {
		what += fmt.Sprintf(", origin_op %d", c.Origin)
	}
	return fmt.Sprintf("rank %d op %d %s (%s)", c.Rank, c.OpID, c.OpType, what)
}

// mismatch returns the error of calls x and y meeting when they are not
// the same collective, or nil. The message names the lower rank first,
// whichever arrived first.
func mismatch(x, y *Call) error {
	a, b := x, y
	if b.Rank < a.Rank {
		a, b = b, a
	}
	if isP2P(a) && isP2P(b) {
		dir := func(c *Call) string {
			if c.OpType == "send_v2" {
				return fmt.Sprintf("rank %d op %d send_v2 to rank %d (%s)", c.Rank, c.OpID, c.Peer, c.Kind)
			}
			return fmt.Sprintf("rank %d op %d recv_v2 from rank %d (%s)", c.Rank, c.OpID, c.Peer, c.Kind)
		}
		switch {
		case a.OpType == b.OpType && a.OpType == "send_v2":
			return fmt.Errorf("point-to-point mismatch: %s meets %s: both send, neither receives", dir(a), dir(b))
		case a.OpType == b.OpType:
			return fmt.Errorf("point-to-point mismatch: %s meets %s: both receive, neither sends", dir(a), dir(b))
		case a.Kind != b.Kind:
			return fmt.Errorf("point-to-point mismatch: %s meets %s: not the same ring", dir(a), dir(b))
		}
		return nil
	}
	if a.Kind != b.Kind || a.Signature != b.Signature || a.Origin != 0 && b.Origin != 0 && a.Origin != b.Origin {
		return fmt.Errorf("collective mismatch on group %v: %s against %s", a.Group, a.describe(), b.describe())
	}
	return nil
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
