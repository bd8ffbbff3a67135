// Command distpass partitions annotated serial ML training programs into
// one SPMD program per rank. Run "distpass help" for its commands.
package main

import (
	"os"

	"github.com/distpass/distpass/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], &cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
}
