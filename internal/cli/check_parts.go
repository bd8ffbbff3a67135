package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

var rankFile = regexp.MustCompile(`^rank(\d+)\.dpir$`)

// readParts reads the rank<N>.dpir files of dir, parsed and verified, in
// rank order: one for each rank of the serial module's meshes, and no
// other. An error names the file. A -shared layout (ranks.json) is
// refused: its class programs need each rank's attrs patched in.
func readParts(env *Env, dir string, serial *ir.Module) ([]int, []*ir.Module, int) {
	fail := func(format string, args ...any) ([]int, []*ir.Module, int) {
		fmt.Fprintf(env.Stderr, format+"\n", args...)
		return nil, nil, ExitFail
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fail("distpass check: -parts: %v", err)
	}
	var ranks []int
	for _, e := range entries {
		if e.Name() == "ranks.json" {
			return fail("%s: a -shared layout (class programs and ranks.json), which check -parts does not read: write the ranks with partition -all -o DIR", filepath.Join(dir, e.Name()))
		}
		if sm := rankFile.FindStringSubmatch(e.Name()); sm != nil && !e.IsDir() {
			r, err := strconv.Atoi(sm[1])
			if err != nil || strconv.Itoa(r) != sm[1] {
				return fail("%s: not a rank's file name (rank<N>.dpir, N without leading zeros)", filepath.Join(dir, e.Name()))
			}
			ranks = append(ranks, r)
		}
	}
	slices.Sort(ranks)
	want := passes.Ranks(serial)
	for _, r := range want {
		if !slices.Contains(ranks, r) {
			return fail("%s: no rank%d.dpir: the serial module's meshes have ranks %v", dir, r, want)
		}
	}
	for _, r := range ranks {
		if !slices.Contains(want, r) {
			return fail("%s: rank %d is in no mesh of the serial module (ranks %v)", filepath.Join(dir, "rank"+strconv.Itoa(r)+".dpir"), r, want)
		}
	}
	mods := make([]*ir.Module, len(ranks))
	for i, r := range ranks {
		path := filepath.Join(dir, "rank"+strconv.Itoa(r)+".dpir")
		ins, err := readInputs(env, []string{path})
		if err != nil {
			return fail("distpass check: %v", err)
		}
		pm, err := parseVerified(ins[0])
		if err != nil {
			printErr(env, path, err)
			return nil, nil, ExitFail
		}
		if pm.Main == nil || pm.Main.Rank != r {
			got := "no main program"
			if pm.Main != nil {
				got = fmt.Sprintf("its main program is rank %d's", pm.Main.Rank)
			}
			return fail("%s: %s, the file name says rank %d", path, got, r)
		}
		mods[i] = pm
	}
	return ranks, mods, ExitOK
}
