// Command distpass partitions annotated serial ML training programs into
// one SPMD program per rank. Run "distpass help" for its commands.
package main

import (
	"os"

	"github.com/distpass/distpass/internal/cli"
	"github.com/distpass/distpass/internal/gctune"
)

// startingHeap is where the collector starts its usual pace: a module of
// about 400,000 ops is read without a collection on the way up.
const startingHeap = 512 << 20

func main() {
	gctune.StartingHeap(startingHeap)
	env := &cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	if os.Getenv("DISTPASS_HUGEPAGES") == "1" {
		// Opt-in: advising huge pages pays on virtual machines that fault
		// pages in slowly, and costs a collection everywhere.
		env.PrepareHeap = gctune.PrepareHeap
	}
	os.Exit(cli.Main(os.Args[1:], env))
}
