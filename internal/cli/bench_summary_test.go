package cli

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// summarize computes each stage's growth between sizes next to each
// other (in the order of benchStages), against walk's, and the ratios of
// partition to clone and of partition-classes to partition per size.
func TestSummarize(t *testing.T) {
	rep := &benchReport{}
	for _, s := range []struct {
		stage string
		ops   int
		wall  int64
	}{
		{"walk", 100, 10}, {"clone", 100, 5}, {"partition", 100, 10}, {"partition-classes", 100, 20},
		{"walk", 1000, 120}, {"clone", 1000, 45}, {"partition", 1000, 110}, {"partition-classes", 1000, 200},
		{"walk", 10000, 1200}, {"parse", 10000, 7}, // parse at one size only: no growth
	} {
		rep.Stages = append(rep.Stages, benchStage{Stage: s.stage, Ops: s.ops, WallNs: s.wall})
	}
	summarize(rep)
	wantGrowth := []benchGrowth{
		{Stage: "walk", FromOps: 100, ToOps: 1000, OpsRatio: 10, Ratio: 12, VsWalk: 1},
		{Stage: "clone", FromOps: 100, ToOps: 1000, OpsRatio: 10, Ratio: 9, VsWalk: 0.75},
		{Stage: "partition", FromOps: 100, ToOps: 1000, OpsRatio: 10, Ratio: 11, VsWalk: 11.0 / 12},
		{Stage: "partition-classes", FromOps: 100, ToOps: 1000, OpsRatio: 10, Ratio: 10, VsWalk: 10.0 / 12},
		{Stage: "walk", FromOps: 1000, ToOps: 10000, OpsRatio: 10, Ratio: 10, VsWalk: 1},
	}
	wantRatios := []benchRatio{
		{Ops: 100, PartitionOverClone: 2, ClassesOverPartition: 2},
		{Ops: 1000, PartitionOverClone: 110.0 / 45, ClassesOverPartition: 200.0 / 110},
	}
	approx := cmpopts.EquateApprox(0, 1e-9)
	if d := cmp.Diff(wantGrowth, rep.Growth, approx); d != "" {
		t.Errorf("growth (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantRatios, rep.Ratios, approx); d != "" {
		t.Errorf("ratios (-want +got):\n%s", d)
	}
	var out bytes.Buffer
	printSummary(&out, rep)
	for _, want := range []string{
		"Growth from 100 to 1000 ops (10.0x the ops): walk 12.0x, clone 9.0x, partition 11.0x, partition-classes 10.0x.\n",
		"Growth from 1000 to 10000 ops (10.0x the ops): walk 10.0x.\n",
		"At 100 ops: partition / clone 2.00x, partition-classes / partition 2.00x.\n",
		"At 1000 ops: partition / clone 2.44x, partition-classes / partition 1.82x.\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
}

// partition over its own clones is the median of the runs' ratios (the
// lower middle one), each run's time over that of the clone made for it,
// not a ratio of the two stages' medians.
func TestSummarizePairedClone(t *testing.T) {
	rep := &benchReport{Stages: []benchStage{
		{Stage: "clone", Ops: 100, WallNs: 10},
		// Runs' ratios 3, 2.5, 4, 2: median 2.5 (lower middle); the
		// stages' medians give 40/10 = 4.
		{Stage: "partition", Ops: 100, WallNs: 40, CloneNs: 10, RunsWallNs: []int64{30, 40, 80, 60}, RunsCloneNs: []int64{10, 16, 20, 30}},
		// One run: its own ratio.
		{Stage: "partition", Ops: 1000, WallNs: 90, CloneNs: 30},
	}}
	summarize(rep)
	want := []benchRatio{
		{Ops: 100, PartitionOverClone: 4, PartitionOverPairedClone: 2.5},
		{Ops: 1000, PartitionOverPairedClone: 3},
	}
	if d := cmp.Diff(want, rep.Ratios, cmpopts.EquateApprox(0, 1e-9)); d != "" {
		t.Errorf("ratios (-want +got):\n%s", d)
	}
	var out bytes.Buffer
	printSummary(&out, rep)
	if want := "At 100 ops: partition / clone 4.00x, partition / its own clone 2.50x (median over runs).\n"; !strings.Contains(out.String(), want) {
		t.Errorf("no %q in\n%s", want, out.String())
	}
}

// With two sizes, bench -json holds a growth entry per stage and the
// ratios of each size.
func TestBenchJSONGrowth(t *testing.T) {
	rep := benchJSON(t, "bench", "-ops", "300,900", "-stages", "walk,clone,partition", "-json")
	if len(rep.Growth) != 3 || len(rep.Ratios) != 2 {
		t.Fatalf("%d growth entries and %d ratios, want 3 and 2: %+v", len(rep.Growth), len(rep.Ratios), rep)
	}
	for _, g := range rep.Growth {
		if g.FromOps >= g.ToOps || g.OpsRatio <= 1 || g.Ratio <= 0 || g.VsWalk <= 0 || math.IsInf(g.Ratio, 0) {
			t.Errorf("growth entry %+v", g)
		}
	}
	for _, r := range rep.Ratios {
		if r.PartitionOverClone <= 0 || r.ClassesOverPartition != 0 {
			t.Errorf("ratios %+v: want partition/clone and no classes (not run)", r)
		}
	}
}
