package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
)

// BenchmarkCommand times whole commands on the synthetic GPT's text in a
// file, as a user runs them: partition -rank 0 (read, parse, verify,
// partition, print) and verify (read, parse, verify). Their difference
// from a build without input verification is what verifying every
// command's input costs.
func BenchmarkCommand(b *testing.B) {
	for _, n := range []int{100000, 1000000} {
		gen, err := models.SyntheticGPTMesh(n, 1, 2, 4)
		if err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(b.TempDir(), "synthetic.dpir")
		if err := os.WriteFile(path, ir.Print(gen), 0o644); err != nil {
			b.Fatal(err)
		}
		gen = nil
		for _, args := range [][]string{{"partition", "-rank", "0"}, {"verify"}} {
			b.Run(args[0]+"/ops="+strconv.Itoa(n), func(b *testing.B) {
				b.ReportAllocs()
				var stderr bytes.Buffer
				env := &Env{Stdin: bytes.NewReader(nil), Stdout: io.Discard, Stderr: &stderr}
				for b.Loop() {
					if code := Main(append(args, path), env); code != ExitOK {
						b.Fatalf("exit %d: %s", code, stderr.String())
					}
				}
			})
		}
	}
}
