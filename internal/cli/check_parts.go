package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"github.com/distpass/distpass/interop/paddle"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

// rankFile matches a rank's program as partition -all writes it: text
// (rank<N>.dpir) or a Paddle ProgramDesc (rank<N>.pdmodel, beside its
// rank<N>.startup.pdmodel and rank<N>.json sidecar, which the pattern
// does not match).
var rankFile = regexp.MustCompile(`^rank(\d+)\.(dpir|pdmodel)$`)

// readParts reads the rank programs of dir, parsed and verified, in
// rank order: one for each rank of the serial module's meshes, and no
// other, all of one format (partition -all's text, or its -format
// pdmodel files: each rank's main and startup ProgramDescs and the
// sidecar, all three required, so that what is proven is every byte
// that a run reads). An error names the file. A -shared layout
// (ranks.json) is refused: its class programs need each rank's attrs
// patched in.
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
	ext := ""
	for _, e := range entries {
		if e.Name() == "ranks.json" {
			return fail("%s: a -shared layout (class programs and ranks.json), which check -parts does not read: write the ranks with partition -all -o DIR", filepath.Join(dir, e.Name()))
		}
		if sm := rankFile.FindStringSubmatch(e.Name()); sm != nil && !e.IsDir() {
			r, err := strconv.Atoi(sm[1])
			if err != nil || strconv.Itoa(r) != sm[1] {
				return fail("%s: not a rank's file name (rank<N>.dpir or rank<N>.pdmodel, N without leading zeros)", filepath.Join(dir, e.Name()))
			}
			if ext != "" && ext != sm[2] {
				return fail("%s: holds both rank<N>.dpir and rank<N>.pdmodel files: give the ranks in one format", dir)
			}
			ext = sm[2]
			ranks = append(ranks, r)
		}
	}
	slices.Sort(ranks)
	want := passes.Ranks(serial)
	for _, r := range want {
		if !slices.Contains(ranks, r) {
			if ext == "" {
				ext = "dpir"
			}
			return fail("%s: no rank%d.%s: the serial module's meshes have ranks %v", dir, r, ext, want)
		}
	}
	for _, r := range ranks {
		if !slices.Contains(want, r) {
			return fail("%s: rank %d is in no mesh of the serial module (ranks %v)", filepath.Join(dir, "rank"+strconv.Itoa(r)+"."+ext), r, want)
		}
	}
	mods := make([]*ir.Module, len(ranks))
	for i, r := range ranks {
		path := filepath.Join(dir, "rank"+strconv.Itoa(r)+"."+ext)
		var pm *ir.Module
		if ext == "pdmodel" {
			pm, err = readPaddleRank(dir, r)
		} else {
			var ins []input
			if ins, err = readInputs(env, []string{path}); err != nil {
				return fail("distpass check: %v", err)
			}
			pm, err = parseVerified(ins[0])
		}
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

// readPaddleRank imports rank r's files as partition -all -format
// pdmodel wrote them into dir, and verifies the module.
func readPaddleRank(dir string, r int) (*ir.Module, error) {
	base := filepath.Join(dir, "rank"+strconv.Itoa(r))
	f := &paddle.Files{SidecarName: base + ".json"}
	for _, x := range []struct {
		path string
		data *[]byte
	}{{base + ".pdmodel", &f.Main}, {base + ".startup.pdmodel", &f.Startup}, {base + ".json", &f.Sidecar}} {
		data, err := os.ReadFile(x.path)
		if err != nil {
			return nil, fmt.Errorf("%v (partition -all -format pdmodel writes a rank's program, startup and sidecar together)", err)
		}
		*x.data = data
	}
	m, err := paddle.ImportFiles(base+".pdmodel", base+".startup.pdmodel", f)
	if err != nil {
		return nil, err
	}
	if err := passes.Verify(m); err != nil {
		return nil, err
	}
	return m, nil
}
