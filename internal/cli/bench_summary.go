package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// benchGrowth is how a stage's wall time grew from one module to the
// next larger one.
type benchGrowth struct {
	Stage    string  `json:"stage"`
	FromOps  int     `json:"from_ops"`
	ToOps    int     `json:"to_ops"`
	OpsRatio float64 `json:"ops_ratio"`  // to_ops / from_ops
	Ratio    float64 `json:"wall_ratio"` // wall time at to_ops / at from_ops
	// VsWalk is Ratio over walk's: how much faster than the machine's
	// floor the stage slowed (0 when walk did not run at both sizes).
	VsWalk float64 `json:"vs_walk,omitempty"`
}

// benchRatio compares stages on one module: the ratios the scale issue
// holds distpass to.
type benchRatio struct {
	Ops int `json:"ops"`
	// PartitionOverClone is one rank's partition over a deep clone.
	PartitionOverClone float64 `json:"partition_over_clone,omitempty"`
	// PartitionOverPairedClone is the median over partition's runs of
	// each run's wall time over that of the clone it worked on.
	PartitionOverPairedClone float64 `json:"partition_over_paired_clone,omitempty"`
	// ClassesOverPartition is partition-classes (every rank) over one
	// rank's partition.
	ClassesOverPartition float64 `json:"classes_over_partition,omitempty"`
}

// summarize fills rep.Growth, for each stage and each pair of modules
// next to each other in size, and rep.Ratios, for each module.
func summarize(rep *benchReport) {
	wall := map[string]map[int]int64{} // stage → ops → wall
	paired := map[int]float64{}        // ops → partition over its runs' clones
	var sizes []int
	for _, s := range rep.Stages {
		if s.Stage == "partition" {
			paired[s.Ops] = pairedRatio(s)
		}
		if wall[s.Stage] == nil {
			wall[s.Stage] = map[int]int64{}
		}
		wall[s.Stage][s.Ops] = s.WallNs
		if !slices.Contains(sizes, s.Ops) {
			sizes = append(sizes, s.Ops)
		}
	}
	slices.Sort(sizes)
	ratio := func(a, b int64) float64 {
		if a <= 0 || b <= 0 {
			return 0
		}
		return float64(b) / float64(a)
	}
	rep.Growth, rep.Ratios = nil, nil
	for i := 1; i < len(sizes); i++ {
		from, to := sizes[i-1], sizes[i]
		floor := ratio(wall["walk"][from], wall["walk"][to])
		for _, stage := range benchStages {
			r := ratio(wall[stage][from], wall[stage][to])
			if r == 0 {
				continue
			}
			g := benchGrowth{Stage: stage, FromOps: from, ToOps: to, OpsRatio: float64(to) / float64(from), Ratio: r}
			if floor > 0 {
				g.VsWalk = r / floor
			}
			rep.Growth = append(rep.Growth, g)
		}
	}
	for _, n := range sizes {
		r := benchRatio{
			Ops:                      n,
			PartitionOverClone:       ratio(wall["clone"][n], wall["partition"][n]),
			PartitionOverPairedClone: paired[n],
			ClassesOverPartition:     ratio(wall["partition"][n], wall["partition-classes"][n]),
		}
		if r.PartitionOverClone != 0 || r.PartitionOverPairedClone != 0 || r.ClassesOverPartition != 0 {
			rep.Ratios = append(rep.Ratios, r)
		}
	}
}

// pairedRatio is the median over s's runs of each run's wall time over
// its clone's (the lower middle one of an even count), or 0 when s has
// no clone times.
func pairedRatio(s benchStage) float64 {
	walls, clones := s.RunsWallNs, s.RunsCloneNs
	if len(walls) == 0 {
		walls, clones = []int64{s.WallNs}, []int64{s.CloneNs}
	}
	var rs []float64
	for i, w := range walls {
		if i < len(clones) && clones[i] > 0 && w > 0 {
			rs = append(rs, float64(w)/float64(clones[i]))
		}
	}
	if len(rs) == 0 {
		return 0
	}
	slices.Sort(rs)
	return rs[(len(rs)-1)/2]
}

// printSummary writes the growth and ratio lines of the table output.
func printSummary(w io.Writer, rep *benchReport) {
	for i := 0; i < len(rep.Growth); {
		g0 := rep.Growth[i]
		var parts []string
		for ; i < len(rep.Growth) && rep.Growth[i].FromOps == g0.FromOps; i++ {
			parts = append(parts, fmt.Sprintf("%s %.1fx", rep.Growth[i].Stage, rep.Growth[i].Ratio))
		}
		fmt.Fprintf(w, "Growth from %d to %d ops (%.1fx the ops): %s.\n", g0.FromOps, g0.ToOps, g0.OpsRatio, strings.Join(parts, ", "))
	}
	for _, r := range rep.Ratios {
		var parts []string
		if r.PartitionOverClone != 0 {
			parts = append(parts, fmt.Sprintf("partition / clone %.2fx", r.PartitionOverClone))
		}
		if r.PartitionOverPairedClone != 0 {
			parts = append(parts, fmt.Sprintf("partition / its own clone %.2fx (median over runs)", r.PartitionOverPairedClone))
		}
		if r.ClassesOverPartition != 0 {
			parts = append(parts, fmt.Sprintf("partition-classes / partition %.2fx", r.ClassesOverPartition))
		}
		fmt.Fprintf(w, "At %d ops: %s.\n", r.Ops, strings.Join(parts, ", "))
	}
}
