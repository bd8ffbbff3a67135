package spmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/distpass/distpass/ir"
)

// A ShardingRule relates an op's input and output dims for sharding, in
// both directions, as Paddle's phi SPMD rules do (InferSpmd and
// InferSpmdReverse). Mappings are dims_mappings: per tensor dim, the
// mesh dim it is split along, or -1. Args are the op's input and output
// args flattened in slot order, as ir.VerifyOptions gives them; a nil
// mapping is an arg the rule does not constrain (it gets nil back).
//
// mesh holds the sizes of the mesh's dims: a rule that splits or merges
// dims (reshape) keeps a dim sharded only where the mesh dim divides it.
type ShardingRule interface {
	// Forward takes the inputs' mappings and returns what the op
	// requires of its inputs, and its outputs' mappings and partials.
	Forward(mesh []int, in [][]int) (Sharding, error)
	// Backward takes the outputs' mappings and returns what the op
	// requires of its inputs and outputs; it gives no partial.
	Backward(mesh []int, out [][]int) (Sharding, error)
	// Notation spells the rule per slot for an op whose input and output
	// args are in and out, in the notation custom ops' definition files
	// state; a rule that is not an einsum says what it does besides in
	// its Note, or what it is in its Form.
	Notation(in, out []Arg) Notation
}

// Sharding is what a rule gives, per input and output arg.
type Sharding struct {
	Inputs, Outputs [][]int
	// Partial lists, per output, the mesh dims it is partial along: the
	// mesh dims of a contracted or reduced dim.
	Partial [][]ir.Partial
}

// Einsum is the rule of most ops, in Paddle's notation: a letter per
// dim of each arg; equal letters are one logical dim; '1' is a dim that
// is never sharded (a broadcast size-1 dim, a softmax axis). A letter of
// the inputs that no output has is contracted or reduced: an output is
// partial along the mesh dim it is sharded on.
type Einsum struct {
	In, Out []string
	// Reduce is the reduction of the partials (sum for a contraction,
	// avg for reduce_mean, max for reduce_max).
	Reduce ir.Reduce
	// Strict makes a mesh dim on two letters an error, where the merge
	// otherwise keeps it on the first and replicates the others (Paddle's
	// merge_conflicts = false, which softmax and embedding use).
	Strict bool
	// NoPartial marks an op whose outputs are never partial: its kernel
	// reduces itself (Paddle's rules that clear it).
	NoPartial bool
	// StrictBackward makes Strict hold for Backward only (Paddle's matmul
	// reverse merges Out with merge_conflicts = false).
	StrictBackward bool
	// Whole marks, per output (by index; missing entries are false), the
	// outputs the rule does not spell (all '1', such as an XShape): never
	// sharded, and never partial, since the op does not compute them from
	// the contracted letters.
	Whole []bool
	// Selects lists the letters of the inputs that pick a slice rather
	// than being summed over (grouped_matmul's experts): an output that
	// lacks one is not partial along its mesh dim.
	Selects string
}

// String spells the rule as einsum: "mk,kn->mn".
func (e *Einsum) String() string {
	return strings.Join(e.In, ",") + "->" + strings.Join(e.Out, ",")
}

// Forward merges the inputs' mappings letter by letter (Merge), and
// gives each arg the merged mesh dims of its letters. An einsum splits no
// dim, so the mesh's sizes do not matter to it.
func (e *Einsum) Forward(_ []int, in [][]int) (Sharding, error) {
	if len(in) != len(e.In) {
		return Sharding{}, fmt.Errorf("rule %s: %d input mappings for %d inputs", e, len(in), len(e.In))
	}
	m, err := Merge(e.In, in, !e.Strict)
	if err != nil {
		return Sharding{}, fmt.Errorf("rule %s: %v", e, err)
	}
	s := Sharding{Inputs: m.dims(e.In, in), Outputs: m.dims(e.Out, nil), Partial: make([][]ir.Partial, len(e.Out))}
	if !e.NoPartial {
		for j, out := range e.Out {
			if j < len(e.Whole) && e.Whole[j] {
				continue
			}
			for _, l := range m.letters {
				if d := m.dim(l); d >= 0 && strings.IndexByte(out, l) < 0 && strings.IndexByte(e.Selects, l) < 0 {
					s.Partial[j] = append(s.Partial[j], ir.Partial{Dim: d, Reduce: e.Reduce})
				}
			}
			slices.SortFunc(s.Partial[j], func(a, b ir.Partial) int { return a.Dim - b.Dim })
		}
	}
	return s, nil
}

// Backward merges the outputs' mappings, and gives each arg the merged
// mesh dims of its letters: a letter no output has (a contraction) is
// replicated.
func (e *Einsum) Backward(_ []int, out [][]int) (Sharding, error) {
	if len(out) != len(e.Out) {
		return Sharding{}, fmt.Errorf("rule %s: %d output mappings for %d outputs", e, len(out), len(e.Out))
	}
	m, err := Merge(e.Out, out, !e.Strict && !e.StrictBackward)
	if err != nil {
		return Sharding{}, fmt.Errorf("rule %s: %v", e, err)
	}
	return Sharding{Inputs: m.dims(e.In, nil), Outputs: m.dims(e.Out, out), Partial: make([][]ir.Partial, len(e.Out))}, nil
}

// LetterMap is the result of Merge: the mesh dim of each letter.
type LetterMap struct {
	letters []byte // in first-seen order
	mesh    []int  // mesh[i] is letters[i]'s mesh dim, or -1
}

func (m *LetterMap) dim(l byte) int {
	if i := slices.Index(m.letters, l); i >= 0 {
		return m.mesh[i]
	}
	return -1
}

// Dim returns the mesh dim letter l is sharded on, or -1.
func (m *LetterMap) Dim(l byte) int { return m.dim(l) }

// dims returns, for each axes string, the mesh dims of its letters ('1'
// and letters without a mesh dim give -1). An arg whose mapping in like
// is nil (when like is given) gets nil.
func (m *LetterMap) dims(axes []string, like [][]int) [][]int {
	res := make([][]int, len(axes))
	for i, a := range axes {
		if like != nil && like[i] == nil {
			continue
		}
		res[i] = make([]int, len(a))
		for k := range len(a) {
			res[i][k] = -1
			if a[k] != '1' {
				res[i][k] = m.dim(a[k])
			}
		}
	}
	return res
}

// Merge folds mappings into one mesh dim per letter, as Paddle's
// ShardingMergeForTensors does: over the tensors in order and their dims
// left to right, a replicated dim (-1) yields to a sharded one, and two
// different mesh dims on one letter are an error. Then a mesh dim that
// shards more than one letter keeps the letter that was sharded on it
// first in that fold (not the letter seen first: a letter replicated in
// the first tensor and sharded in a later one comes after the letters
// the first tensor shards), and the others become -1 (when resolve;
// otherwise that is an error). '1' dims and nil mappings take no part.
func Merge(axes []string, mappings [][]int, resolve bool) (*LetterMap, error) {
	m := &LetterMap{}
	var order []int // letters' indexes, in the order they became sharded
	for t, a := range axes {
		dm := mappings[t]
		if dm == nil {
			continue
		}
		if len(dm) != len(a) {
			return nil, fmt.Errorf("mapping %s of %d dims for axes %q", ir.FormatInts(dm), len(dm), a)
		}
		for k := range len(a) {
			l := a[k]
			if dm[k] < -1 {
				return nil, fmt.Errorf("mapping %s has mesh dim %d", ir.FormatInts(dm), dm[k])
			}
			if l == '1' {
				continue
			}
			i := slices.Index(m.letters, l)
			if i < 0 {
				m.letters = append(m.letters, l)
				m.mesh = append(m.mesh, dm[k])
				if dm[k] >= 0 {
					order = append(order, len(m.letters)-1)
				}
				continue
			}
			switch cur := m.mesh[i]; {
			case cur == dm[k] || dm[k] < 0:
			case cur < 0:
				m.mesh[i] = dm[k]
				order = append(order, i)
			default:
				return nil, fmt.Errorf("dim %q is sharded along two mesh dims, %d and %d", string(l), cur, dm[k])
			}
		}
	}
	// A mesh dim on several letters: the letter sharded on it first keeps
	// it.
	for n, j := range order {
		d := m.mesh[j]
		for _, i := range order[:n] {
			if m.mesh[i] != d {
				continue
			}
			if !resolve {
				return nil, fmt.Errorf("mesh dim %d shards dims %q and %q", d, string(m.letters[i]), string(m.letters[j]))
			}
			m.mesh[j] = -1
			break
		}
	}
	return m, nil
}
