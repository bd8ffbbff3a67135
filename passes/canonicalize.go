package passes

import (
	"strconv"
	"strings"

	"github.com/distpass/distpass/ir"
)

// CanonicalizeNamesPass renumbers generated temp names in order of first
// appearance, so that output does not depend on which names a generator
// handed out and later dropped.
func CanonicalizeNamesPass() *Pass {
	return &Pass{
		Name: "canonicalize-names",
		Doc: `renumber generated temp vars in order of appearance
Vars named PREFIX.tmp_N (Paddle's and ir.Module.FreshName's form), with
any suffix such as @GRAD, are renumbered per PREFIX from 0 in the order
their base name first appears: main then startup, blocks in order, each
block's vars in order. Every reference follows (op args, op dists, the
params-grads list). Other names are left alone. Counts vars-renamed.`,
		Run: func(ctx *Context, m *ir.Module) error {
			next := map[string]int{}       // per prefix
			newBase := map[string]string{} // old base name -> new
			for _, p := range m.Programs() {
				for _, b := range p.Blocks {
					for _, v := range b.Vars() {
						base, prefix, ok := tempBase(v.Name())
						if !ok {
							continue
						}
						if _, seen := newBase[base]; !seen {
							newBase[base] = prefix + "_" + strconv.Itoa(next[prefix])
							next[prefix]++
						}
					}
				}
			}
			renamed := 0
			err := m.RenameVars(func(name string) string {
				base, _, ok := tempBase(name)
				if !ok {
					return name
				}
				nb, ok := newBase[base]
				if !ok {
					return name
				}
				return nb + name[len(base):]
			})
			if err != nil {
				return err
			}
			for old, nb := range newBase {
				if old != nb {
					renamed++
				}
			}
			ctx.Count("vars-renamed", renamed)
			return nil
		},
	}
}

// tempBase splits "fc.tmp_12@GRAD" into its base "fc.tmp_12" and prefix
// "fc.tmp"; ok is false for names of another form.
func tempBase(name string) (base, prefix string, ok bool) {
	base = name
	if i := strings.IndexByte(name, '@'); i >= 0 {
		base = name[:i]
	}
	i := strings.LastIndex(base, ".tmp_")
	if i < 0 || i+5 == len(base) {
		return "", "", false
	}
	for _, c := range base[i+5:] {
		if c < '0' || c > '9' {
			return "", "", false
		}
	}
	return base, base[:i+4], true
}
