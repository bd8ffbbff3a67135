package ir

import (
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// CmpOptions is the one definition of structural equality of IR values,
// for go-cmp: generator state and name indexes are ignored, nil and empty
// slices are equal, and NaN equals NaN (a printed NaN re-parses to a NaN).
func CmpOptions() cmp.Options {
	return cmp.Options{
		cmpopts.IgnoreUnexported(Module{}),
		cmp.Transformer("block", func(b Block) blockView {
			return blockView{b.Index, b.Parent, b.Forward, b.vars, b.Ops}
		}),
		cmp.AllowUnexported(Var{}), // its name
		cmpopts.EquateEmpty(),
		cmpopts.EquateNaNs(),
		cmp.Comparer(func(a, b Float) bool { return a == b || a != a && b != b }),
		cmp.Comparer(func(a, b Float64) bool { return a == b || a != a && b != b }),
	}
}

// Equal reports whether two modules are structurally equal under CmpOptions.
func Equal(a, b *Module) bool { return cmp.Equal(a, b, CmpOptions()) }

// Diff returns a human-readable difference of two modules, or "" when they
// are equal. Its format is go-cmp's and not stable; do not parse it.
func Diff(a, b *Module) string { return cmp.Diff(a, b, CmpOptions()) }

// blockView exposes a block's unexported var table to cmp.
type blockView struct {
	Index, Parent, Forward int
	Vars                   []*Var
	Ops                    []*Op
}
