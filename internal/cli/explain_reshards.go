package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/passes"
)

// explainReshards partitions the serial module of files for every rank
// and prints what each of its reshard ops became (analysis.ReshardCosts).
func explainReshards(env *Env, files []string, asJSON bool) int {
	in, m, code, ok := loadOne(env, "explain", files)
	if !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(env.Stderr, format+"\n", a...)
		return ExitFail
	}
	if m.Main == nil {
		return fail("%s: no main program", in.name)
	}
	if m.Main.Rank >= 0 {
		return fail("%s: -reshards partitions a serial module, and this one is partitioned for rank %d", in.name, m.Main.Rank)
	}
	ranks := passes.Ranks(m)
	if len(ranks) == 0 {
		return fail("%s: the module has no mesh, so no ranks", in.name)
	}
	parts, err := passes.PartitionAll(context.Background(), m, lower.DefaultRegistry())
	if err != nil {
		printErr(env, in.name, err)
		return ExitFail
	}
	costs, err := analysis.ReshardCosts(m, ranks, parts)
	if err != nil {
		return fail("%s: %v", in.name, err)
	}
	if asJSON {
		err = writeReshardsJSON(env, in.name, costs)
	} else {
		_, err = fmt.Fprint(env.Stdout, reshardsText(costs))
	}
	if err != nil {
		return fail("distpass explain: %v", err)
	}
	return ExitOK
}

// spellDist spells d as the text format does, "(no dist)" for none.
func spellDist(d *ir.TensorDist) string {
	if d == nil {
		return "(no dist)"
	}
	return d.String()
}

func reshardsText(costs []analysis.ReshardCost) string {
	var sb strings.Builder
	var total, most int64
	perRank := map[int]int64{}
	for _, c := range costs {
		fmt.Fprintf(&sb, "reshard op %d", c.Op)
		if c.Block != 0 {
			fmt.Fprintf(&sb, " ^%d", c.Block)
		}
		fmt.Fprintf(&sb, ": %s %s -> %s %s\n", c.X, spellDist(c.From), c.Out, spellDist(c.To))
		if c.Origin != "" {
			fmt.Fprintf(&sb, "  needed: %s\n", c.Origin)
		}
		// Ranks that lower it alike share a line, in rank order of the
		// first.
		var lines []string
		byLine := map[string][]int{}
		for _, r := range c.Ranks {
			line := strings.Join(r.Ops, ", ") + ": " + plural(int(r.Bytes), "byte")
			if _, ok := byLine[line]; !ok {
				lines = append(lines, line)
			}
			byLine[line] = append(byLine[line], r.Rank)
			perRank[r.Rank] += r.Bytes
		}
		for _, line := range lines {
			rs := byLine[line]
			who := "rank " + strconv.Itoa(rs[0])
			if len(rs) > 1 {
				who = "ranks " + strings.Trim(ir.FormatInts(rs), "[]")
			}
			fmt.Fprintf(&sb, "  %s: %s\n", who, line)
		}
		total += c.Bytes()
	}
	for _, b := range perRank {
		most = max(most, b)
	}
	fmt.Fprintf(&sb, "%s: %s per step over all ranks, at most %s on one rank\n",
		plural(len(costs), "reshard"), plural(int(total), "byte"), plural(int(most), "byte"))
	return sb.String()
}

type jsonReshard struct {
	Op     int64             `json:"op"`
	Block  int               `json:"block"`
	X      string            `json:"x"`
	Out    string            `json:"out"`
	From   string            `json:"from"`
	To     string            `json:"to"`
	Origin string            `json:"origin"`
	Bytes  int64             `json:"bytes"`
	Ranks  []jsonReshardRank `json:"ranks"`
}

type jsonReshardRank struct {
	Rank  int      `json:"rank"`
	Ops   []string `json:"ops"`
	Bytes int64    `json:"bytes"`
}

func writeReshardsJSON(env *Env, file string, costs []analysis.ReshardCost) error {
	doc := struct {
		File     string        `json:"file"`
		Reshards []jsonReshard `json:"reshards"`
	}{File: file, Reshards: []jsonReshard{}}
	for _, c := range costs {
		j := jsonReshard{Op: c.Op, Block: c.Block, X: c.X, Out: c.Out, From: spellDist(c.From), To: spellDist(c.To),
			Origin: c.Origin, Bytes: c.Bytes(), Ranks: []jsonReshardRank{}}
		for _, r := range c.Ranks {
			j.Ranks = append(j.Ranks, jsonReshardRank{Rank: r.Rank, Ops: r.Ops, Bytes: r.Bytes})
		}
		doc.Reshards = append(doc.Reshards, j)
	}
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}
