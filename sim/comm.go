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
	// ranks is how many ranks run, when known (Expect): once every rank
	// that has not finished waits in a meeting that misses a member, no
	// meeting can complete, and all fail at once rather than at the
	// deadline. Without it the deadline alone ends a wait.
	ranks int

	mu       sync.Mutex
	meetings map[meetKey]*meeting
	seq      map[seqKey]int // per rank and group: collectives issued
	finished map[int]bool   // ranks whose program has ended
	blocked  int            // ranks waiting in a meeting not yet ended
}

// Expect tells c that n ranks run, so that it can tell a deadlock when
// it happens: the deadline then only bounds how long a rank may compute
// between collectives while every other waits.
func (c *Comm) Expect(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ranks = n
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
	// Every call so far agrees with first (the lowest rank's) on kind
	// and signature, and those that carry an origin with origin's: a new
	// call is held to these two, not to every member.
	first, origin *Call
	waiters       int // members blocked in Meet on it, counted in Comm.blocked
}

// join checks call against the members so far and records it; a
// mismatch fails the meeting. The caller holds c.mu.
func (c *Comm) join(m *meeting, call *Call) {
	refs := [2]*Call{m.first, m.origin}
	if refs[1] == refs[0] {
		refs[1] = nil
	}
	for _, ref := range refs {
		if ref == nil {
			continue
		}
		if err := mismatch(ref, call); err != nil {
			c.end(m, err)
			return
		}
	}
	m.calls[call.Rank] = call
	if m.first == nil || call.Rank < m.first.Rank {
		m.first = call
	}
	if call.Origin != 0 && (m.origin == nil || call.Rank < m.origin.Rank) {
		m.origin = call
	}
}

// end ends meeting m, with err (nil: every member met), unless it has
// ended already: a timer may fire as the last member arrives, or an
// error come first. Its waiters stop counting as blocked. The caller
// holds c.mu.
func (c *Comm) end(m *meeting, err error) {
	select {
	case <-m.done:
		return
	default:
	}
	m.err = err
	close(m.done)
	c.blocked -= m.waiters
	m.waiters = 0
}

// checkDeadlock fails every meeting still open when every rank that
// has not finished is blocked in one: none of them can complete. The
// caller holds c.mu.
func (c *Comm) checkDeadlock() {
	if c.ranks == 0 || c.blocked+len(c.finished) < c.ranks {
		return
	}
	// In key order, so that the messages do not depend on map order.
	keys := make([]meetKey, 0, len(c.meetings))
	for k := range c.meetings {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b meetKey) int {
		if x := strings.Compare(a.group, b.group); x != 0 {
			return x
		}
		return a.seq - b.seq
	})
	for _, k := range keys {
		m := c.meetings[k]
		first := m.first
		if first == nil {
			continue
		}
		var missing []int
		for _, r := range first.Group {
			if m.calls[r] == nil {
				missing = append(missing, r)
			}
		}
		c.end(m, fmt.Errorf("op %d %s on group %s: deadlock: it waits for ranks %s, and every rank still running waits in a collective",
			first.OpID, first.OpType, fmtRanks(first.Group), fmtRanks(missing)))
	}
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
		return nil, fmt.Errorf("rank %d: op %d %s: rank is not in its group %s", call.Rank, call.OpID, call.OpType, fmtRanks(call.Group))
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
				c.end(m, gone(call, r))
				break
			}
		}
	}
	if m.err == nil {
		c.join(m, call)
		if m.err == nil && len(m.calls) == len(call.Group) {
			c.end(m, nil)
		}
	}
	select {
	case <-m.done:
	default:
		m.waiters++
		c.blocked++
		c.checkDeadlock()
	}
	c.mu.Unlock()

	timer := time.NewTimer(c.deadline)
	defer timer.Stop()
	select {
	case <-m.done:
	case <-timer.C:
		// The meeting may have ended as the timer fired: fail leaves a
		// met or failed meeting as it is.
		c.mu.Lock()
		var missing []int
		for _, r := range call.Group {
			if m.calls[r] == nil {
				missing = append(missing, r)
			}
		}
		c.end(m, fmt.Errorf("rank %d: op %d %s on group %s: timed out after %v waiting for ranks %s",
			call.Rank, call.OpID, call.OpType, fmtRanks(call.Group), c.deadline, fmtRanks(missing)))
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
		c.end(m, gone(first, rank))
	}
	c.checkDeadlock()
}

// gone is the error of call, whose group member r finished its program
// without joining. Whether r finished before or after call arrived, the
// message is the same (the SPMD runner names the waiting rank).
func gone(call *Call, r int) error {
	if call.OpType == "send_v2" {
		return peerGone{fmt.Errorf("op %d send_v2 to rank %d (%s): rank %d finished its program without receiving it",
			call.OpID, call.Peer, call.Kind, r)}
	}
	return peerGone{fmt.Errorf("op %d %s on group %s: rank %d finished its program without joining",
		call.OpID, call.OpType, fmtRanks(call.Group), r)}
}

// maxRanksShown is how many ranks a message lists before it elides.
const maxRanksShown = 16

// fmtRanks spells a list of ranks as %v does, eliding the middle of a
// long one: a group of thousands would make a message of pages.
func fmtRanks(rs []int) string {
	if len(rs) <= maxRanksShown {
		return fmt.Sprint(rs)
	}
	head := fmt.Sprint(rs[:maxRanksShown-2])
	return fmt.Sprintf("%s … %d %d] (%d ranks)", head[:len(head)-1], rs[len(rs)-2], rs[len(rs)-1], len(rs))
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
		return fmt.Errorf("collective mismatch on group %s: %s against %s", fmtRanks(a.Group), a.describe(), b.describe())
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

// peerGone is the error of a collective a member never joined because
// its program ended (often on an error of its own, the one to report).
type peerGone struct{ error }

func (e peerGone) Unwrap() error { return e.error }
