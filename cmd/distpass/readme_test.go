package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distpass/distpass/internal/cli"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/ops"
	"github.com/distpass/distpass/passes"
)

const readme = "../../README.md"

// TestReadmeLists keeps the README's lists of passes, impls and op types
// equal to the registries and the op table; DISTPASS_UPDATE=1 rewrites
// them.
func TestReadmeLists(t *testing.T) {
	src, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	got := string(src)
	want := got
	for _, sec := range []struct{ name, body string }{
		{"passes", passTable()},
		{"impls", implTable()},
		{"ops", opTable()},
	} {
		want, err = replaceSection(want, sec.name, sec.body)
		if err != nil {
			t.Fatal(err)
		}
	}
	if got == want {
		return
	}
	if os.Getenv("DISTPASS_UPDATE") != "" {
		if err := os.WriteFile(readme, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's generated lists are stale; run DISTPASS_UPDATE=1 go test ./cmd/distpass -run TestReadme and read the diff")
}

// replaceSection puts body between the line "<!-- NAME: ... -->" and the
// line "<!-- end NAME -->".
func replaceSection(doc, name, body string) (string, error) {
	start := strings.Index(doc, "<!-- "+name+": ")
	end := strings.Index(doc, "<!-- end "+name+" -->")
	if start < 0 || end < start {
		return "", fmt.Errorf("README.md has no %s section (<!-- %s: ... --> ... <!-- end %s -->)", name, name, name)
	}
	nl := strings.Index(doc[start:], "\n")
	return doc[:start+nl+1] + body + doc[end:], nil
}

func passTable() string {
	var sb strings.Builder
	sb.WriteString("| pass | options | what it does |\n|---|---|---|\n")
	for _, p := range passes.DefaultRegistry().Passes() {
		var opts []string
		for _, o := range p.Options {
			opts = append(opts, "`"+o.Name+"`")
		}
		fmt.Fprintf(&sb, "| `%s` | %s | %s |\n", p.Name, strings.Join(opts, ", "), p.Summary())
	}
	return sb.String()
}

func implTable() string {
	var sb strings.Builder
	sb.WriteString("| impl | name | what it emits |\n|---|---|---|\n")
	for _, c := range lower.DefaultRegistry().Containers() {
		for i, im := range c.Impls {
			fmt.Fprintf(&sb, "| `%s:%d` | %s | %s |\n", c.Type, i, im.Name, im.Doc)
		}
	}
	return sb.String()
}

// opTable lists the op table's defs but the grad defs derived from a
// forward def, which its grad column names.
func opTable() string {
	var sb strings.Builder
	var n, derived int
	for _, fam := range ops.Families() {
		var types, grads, rules []string
		for _, d := range ops.All() {
			switch {
			case d.Family != fam:
			case d.Forward() != nil:
				derived++
			default:
				n++
				types = append(types, "`"+d.Type+"`")
				if d.Grad != nil {
					grads = append(grads, "`"+d.Type+"`")
				}
				if d.Sharding != nil {
					rules = append(rules, "`"+d.Type+"`")
				}
			}
		}
		fmt.Fprintf(&sb, "| %s | %s | %s | %s |\n", fam, strings.Join(types, ", "), strings.Join(grads, ", "), strings.Join(rules, ", "))
	}
	return fmt.Sprintf("%d op types, and %d grad op types derived from them; `distpass ops` shows their slots, attrs, shape rules and sharding rules, which [docs/rules.md](docs/rules.md) lists as they print themselves:\n\n", n, derived) +
		"| family | op types | with a gradient | with a sharding rule |\n|---|---|---|---|\n" + sb.String()
}

// code spells s as a code span in a table cell: | escaped, which GitHub
// needs even there; "" stays empty.
func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
}

// TestReadmeCommands runs every command of the README's sh blocks, as
// written and in order, in a directory holding a copy of examples/ and of
// the Paddle fixtures:
// `go run ./cmd/distpass ARGS` runs distpass in-process, pipes feed
// stdout to stdin, `dot` runs Graphviz when it is installed, and `go
// test ./...` is what is running. Any other command is an error, so the
// README cannot show one that is not run here.
func TestReadmeCommands(t *testing.T) {
	src, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := copyDir(examples, filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}
	// The Paddle fixtures, at the path the README names them by.
	fixtures := filepath.Join("interop", "paddle", "testdata")
	if err := copyDir(filepath.Join("..", "..", fixtures), filepath.Join(dir, fixtures)); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	cmds := shCommands(string(src))
	if len(cmds) < 8 {
		t.Fatalf("found %d commands in the README's sh blocks", len(cmds))
	}
	skippedDot = 0
	for _, line := range cmds {
		if err := runLine(line); err != nil {
			t.Errorf("README command %q: %v", line, err)
		}
	}
	if skippedDot > 0 {
		t.Skipf("Graphviz dot not found: %d README stages that run dot were not run", skippedDot)
	}
}

// skippedDot counts the dot stages runLine could not run.
var skippedDot int

// shCommands returns the command lines of the ```sh blocks, without
// their comments.
func shCommands(doc string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			in = true
		case strings.HasPrefix(line, "```"):
			in = false
		case in:
			if l := strings.TrimSpace(stripComment(line)); l != "" {
				out = append(out, l)
			}
		}
	}
	return out
}

// stripComment drops a # comment that is outside quotes.
func stripComment(line string) string {
	var q rune
	for i, r := range line {
		switch {
		case q != 0:
			if r == q {
				q = 0
			}
		case r == '\'' || r == '"':
			q = r
		case r == '#' && (i == 0 || line[i-1] == ' '):
			return line[:i]
		}
	}
	return line
}

// words splits a command as sh does for the quoting the README uses:
// single and double quotes, no escapes, no expansion.
func words(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	var q rune
	have := false
	for _, r := range s {
		switch {
		case q != 0:
			if r == q {
				q = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			q, have = r, true
		case r == ' ' || r == '\t':
			if have {
				out = append(out, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if q != 0 {
		return nil, fmt.Errorf("unterminated quote")
	}
	if have {
		out = append(out, cur.String())
	}
	return out, nil
}

func runLine(line string) error {
	ws, err := words(line)
	if err != nil {
		return err
	}
	// Split into pipeline stages at a bare |.
	var stages [][]string
	start := 0
	for i, w := range ws {
		if w == "|" {
			stages = append(stages, ws[start:i])
			start = i + 1
		}
	}
	stages = append(stages, ws[start:])
	var in io.Reader = strings.NewReader("")
	for _, st := range stages {
		var stdout, stderr bytes.Buffer
		switch {
		case len(st) >= 3 && st[0] == "go" && st[1] == "run" && st[2] == "./cmd/distpass":
			env := &cli.Env{Stdin: in, Stdout: &stdout, Stderr: &stderr}
			if code := cli.Main(st[3:], env); code != cli.ExitOK {
				return fmt.Errorf("distpass %s: exit %d: %s", strings.Join(st[3:], " "), code, stderr.String())
			}
		case len(st) >= 2 && st[0] == "go" && st[1] == "test":
			// The suite itself: running now.
		case len(st) > 0 && st[0] == "dot":
			if _, err := exec.LookPath("dot"); err != nil {
				if os.Getenv("DISTPASS_REQUIRE_DOT") != "" {
					return fmt.Errorf("Graphviz dot not found, and DISTPASS_REQUIRE_DOT is set")
				}
				skippedDot++
				continue
			}
			c := exec.Command("dot", st[1:]...)
			c.Stdin, c.Stdout, c.Stderr = in, &stdout, &stderr
			if err := c.Run(); err != nil {
				return fmt.Errorf("dot: %v: %s", err, stderr.String())
			}
		default:
			return fmt.Errorf("the README test does not know how to run %q", strings.Join(st, " "))
		}
		in = bytes.NewReader(stdout.Bytes())
	}
	return nil
}
