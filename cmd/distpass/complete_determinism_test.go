package main

import (
	"os"
	"strings"
	"testing"

	"github.com/distpass/distpass/internal/cli"
)

// TestCompleteCLIDeterministic: complete's module, -report and -report
// -json are the same bytes run twice, and run on the module read from
// stdin after a round trip through fmt (the JSON's file name aside).
func TestCompleteCLIDeterministic(t *testing.T) {
	src, err := os.ReadFile(gptBare)
	if err != nil {
		t.Fatal(err)
	}
	code, formatted, errOut := distpass("", "fmt", gptBare)
	if code != cli.ExitOK || errOut != "" {
		t.Fatalf("fmt: exit %d: %s", code, errOut)
	}
	for _, args := range [][]string{{}, {"-report"}, {"-report", "-json"}} {
		run := func(stdin string, file string) string {
			a := append(append([]string{"complete"}, args...), file)
			code, out, errOut := distpass(stdin, a...)
			if code != cli.ExitOK || errOut != "" {
				t.Fatalf("complete %v: exit %d: %s", a, code, errOut)
			}
			return out
		}
		first := run("", gptBare)
		if again := run("", gptBare); again != first {
			t.Errorf("complete %v: two runs differ", args)
		}
		for name, in := range map[string]string{"the file on stdin": string(src), "fmt's output": formatted} {
			got := run(in, "-")
			if len(args) == 2 {
				got = strings.Replace(got, `"file": "<stdin>"`, `"file": "`+gptBare+`"`, 1)
			}
			if got != first {
				t.Errorf("complete %v on %s differs from on the file", args, name)
			}
		}
	}
}
