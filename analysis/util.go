package analysis

import (
	"math"
	"math/bits"
	"strconv"

	"github.com/distpass/distpass/ir"
)

// quoteName writes a var, mesh or slot name as the text format does:
// bare when it can be, Go-quoted otherwise.
func quoteName(s string) string {
	if s == "" || !isNameStart(s[0]) {
		return strconv.Quote(s)
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isNameStart(c) && !isDigit(c) && c != '.' && c != '@' {
			return strconv.Quote(s)
		}
	}
	return s
}

func isNameStart(c byte) bool { return c == '_' || isLower(c) || 'A' <= c && c <= 'Z' }

// fmtInts writes xs as the text format does: "[0, -1]".
func fmtInts[T int | int64](xs []T) string {
	b := []byte{'['}
	for i, x := range xs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return string(append(b, ']'))
}

// meshes looks meshes up by name: by scanning when there are few, by a
// map otherwise. The first of several meshes with one name wins.
type meshes struct {
	list   []*ir.ProcessMesh
	byName map[string]*ir.ProcessMesh
}

func newMeshes(m *ir.Module) meshes {
	ms := meshes{list: m.Meshes}
	if len(m.Meshes) > 8 {
		ms.byName = make(map[string]*ir.ProcessMesh, len(m.Meshes))
		for _, pm := range m.Meshes {
			if pm != nil {
				if _, ok := ms.byName[pm.Name]; !ok {
					ms.byName[pm.Name] = pm
				}
			}
		}
	}
	return ms
}

func (ms *meshes) get(name string) *ir.ProcessMesh {
	if ms.byName != nil {
		return ms.byName[name]
	}
	for _, pm := range ms.list {
		if pm != nil && pm.Name == name {
			return pm
		}
	}
	return nil
}

// push appends x to s, doubling the array when it is full: append grows
// a large slice by a quarter at a time, copying it each time.
func push[T any](s []T, x T) []T {
	if len(s) == cap(s) {
		t := make([]T, len(s), max(16, 2*cap(s)))
		copy(t, s)
		s = t
	}
	return append(s, x)
}

// pushAll appends xs to s, doubling the array when it is too small.
func pushAll[T any](s []T, xs ...T) []T {
	if cap(s)-len(s) < len(xs) {
		t := make([]T, len(s), max(16, 2*cap(s), len(s)+len(xs)))
		copy(t, s)
		s = t
	}
	return append(s, xs...)
}

// group sorts n items by key, a number in [0, keys), keeping their order
// within a key: the items of key k are order[start[k]:start[k+1]]. It
// costs O(keys + n), where a comparison sort would cost O(n log n).
func group(keys, n int, key func(int) int32) (start, order []int32) {
	start = make([]int32, keys+1)
	for j := range n {
		start[key(j)+1]++
	}
	for k := range keys {
		start[k+1] += start[k]
	}
	order = make([]int32, n)
	for j := range n {
		k := key(j)
		order[start[k]] = int32(j)
		start[k]++
	}
	shiftStarts(start)
	return start, order
}

// shiftStarts restores the starts of a compressed-row table that were
// used as fill cursors: after the fill, start[k] holds the old
// start[k+1].
func shiftStarts(start []int32) {
	copy(start[1:], start[:len(start)-1])
	start[0] = 0
}

// countOverflows reports whether the element count of shape, dims of
// unknown size (-1) skipped, overflows int64.
func countOverflows(shape []int64) bool {
	n := uint64(1)
	for _, d := range shape {
		if d < 0 {
			continue
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return true
		}
		n = lo
	}
	return false
}
