package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// badCase is one case of the catalogue of bad input: the file, the
// distpass arguments before it, and the one line of stderr it must give.
type badCase struct {
	file string
	args []string
	want string
	line int // of "case" in cases.txt
}

// minBadCases is the fewest cases the catalogue may have.
const minBadCases = 40

// badCaseDeadline is how long one case may run: every case takes well
// under a second, so a case that runs out is a hang.
const badCaseDeadline = 60 * time.Second

// TestBadInput runs the distpass command (the real main, as installed by
// TestMain for the scripts) on every case of the catalogue of bad input in
// ../../testdata/bad, from that directory, and checks that each exits with
// status 1, prints nothing on stdout and exactly its one expected line on
// stderr: no panic, no stack overflow, no second line, no hang. It also
// checks that every file of the directory has a case and every case a
// file, that each expected line names the file (or, for a -pipeline text,
// the pipeline), and that the catalogue has at least minBadCases cases.
// See testdata/bad/README.md.
func TestBadInput(t *testing.T) {
	dir, cases := badCatalogue(t)
	if len(cases) < minBadCases {
		t.Errorf("the catalogue has %d cases, want at least %d", len(cases), minBadCases)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for _, e := range entries {
		if e.Name() != "README.md" && e.Name() != "cases.txt" {
			files[e.Name()] = true
		}
	}
	seen := map[string]bool{}
	for _, c := range cases {
		switch {
		case seen[c.file]:
			t.Errorf("cases.txt:%d: %s has a second case", c.line, c.file)
		case !files[c.file]:
			t.Errorf("cases.txt:%d: no file %s in testdata/bad", c.line, c.file)
		}
		seen[c.file] = true
		if !strings.HasPrefix(c.want, c.file+":") && !strings.HasPrefix(c.want, "distpass run: pipeline:") {
			t.Errorf("cases.txt:%d: the error of %s names neither the file nor the pipeline: %s", c.line, c.file, c.want)
		}
	}
	for f := range files {
		if !seen[f] {
			t.Errorf("testdata/bad/%s has no case in cases.txt", f)
		}
	}

	bin, err := exec.LookPath("distpass") // installed by TestMain
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if !files[c.file] {
			continue
		}
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), badCaseDeadline)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, append(c.args, c.file)...)
			cmd.Dir = dir
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			shown := "distpass " + strings.Join(cmd.Args[1:], " ")
			if ctx.Err() != nil {
				t.Fatalf("%s: still running after %v (killed)", shown, badCaseDeadline)
			}
			var exit *exec.ExitError
			switch {
			case err == nil:
				t.Errorf("%s: exit status 0, want 1", shown)
			case !errors.As(err, &exit):
				t.Fatalf("%s: %v", shown, err)
			case exit.ExitCode() != 1:
				t.Errorf("%s: exit status %d, want 1", shown, exit.ExitCode())
			}
			if stdout.Len() > 0 {
				t.Errorf("%s: wrote %d bytes to stdout, want none:\n%s", shown, stdout.Len(), clip(stdout.String()))
			}
			if got := stderr.String(); got != c.want+"\n" {
				t.Errorf("%s: stderr:\n%s\nwant the one line:\n%s", shown, clip(got), c.want)
			}
		})
	}
}

// moduleCommands are distpass's commands that read a module, each with
// arguments that would make it lower, run, draw or write the module.
var moduleCommands = [][]string{
	{"partition", "-rank", "0"},
	{"partition", "-all", "-o", "out"},
	{"run", "-pipeline", "dce"},
	{"check"},
	{"explain", "-all"},
	{"html", "-pipeline", "dce"},
	{"mlir"},
	{"dot"},
	{"export", "-drop", "-o", os.DevNull},
	{"complete"},
	{"explain", "-sharding", "x"},
}

// TestEveryCommandVerifies runs every command that reads a module on
// every case of the catalogue that verify refuses (and the unverified_*
// cases, which name another command): each must refuse it as verify
// does, with the same one line, and write nothing, so that no command
// lowers, runs or draws a module that breaks the IR's rules.
func TestEveryCommandVerifies(t *testing.T) {
	dir, cases := badCatalogue(t)
	bin, err := exec.LookPath("distpass") // installed by TestMain
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cases {
		if !(len(c.args) == 1 && c.args[0] == "verify") && !strings.HasPrefix(c.file, "unverified_") {
			continue
		}
		n++
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			for _, args := range moduleCommands {
				ctx, cancel := context.WithTimeout(context.Background(), badCaseDeadline)
				cmd := exec.CommandContext(ctx, bin, append(args, c.file)...)
				cmd.Dir = dir
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				cancel()
				shown := "distpass " + strings.Join(cmd.Args[1:], " ")
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != 1 {
					t.Errorf("%s: %v, want exit status 1", shown, err)
				}
				if stdout.Len() > 0 {
					t.Errorf("%s: wrote %d bytes to stdout, want none", shown, stdout.Len())
				}
				if got := stderr.String(); got != c.want+"\n" {
					t.Errorf("%s: stderr:\n%s\nwant the one line:\n%s", shown, clip(got), c.want)
				}
				if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
					t.Errorf("%s: wrote testdata/bad/out", shown)
				}
			}
		})
	}
	if n < 60 {
		t.Errorf("%d cases of verify's, want 60 or more", n)
	}
}

// badCatalogue returns the catalogue's directory and its cases.
func badCatalogue(t *testing.T) (string, []badCase) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "bad"))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := readBadCases(filepath.Join(dir, "cases.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, cases
}

// clip shortens a long output (a panic's stack) for a failure message.
func clip(s string) string {
	if len(s) > 4000 {
		return s[:4000] + "\n[…]"
	}
	return s
}

// readBadCases reads cases.txt: blank lines and # comments aside, each
// case is three lines, "case FILE", "args ARGS" and "want LINE".
func readBadCases(path string) ([]badCase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cases []badCase
	sc := bufio.NewScanner(f)
	n := 0
	var cur *badCase
	field := func(line, key string) (string, bool) {
		return strings.CutPrefix(line, key+" ")
	}
	for sc.Scan() {
		n++
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		switch {
		case cur == nil:
			file, ok := field(line, "case")
			if !ok || file == "" {
				return nil, lineError(path, n, "want \"case FILE\", found %q", line)
			}
			cur = &badCase{file: file, line: n}
		case cur.args == nil:
			args, ok := field(line, "args")
			if !ok {
				return nil, lineError(path, n, "want \"args ARGS\", found %q", line)
			}
			cur.args, err = splitArgs(args)
			if err != nil {
				return nil, lineError(path, n, "%v", err)
			}
		default:
			want, ok := field(line, "want")
			if !ok || want == "" {
				return nil, lineError(path, n, "want \"want LINE\", found %q", line)
			}
			cur.want = want
			cases = append(cases, *cur)
			cur = nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, lineError(path, n, "case %s is not complete", cur.file)
	}
	return cases, nil
}

func lineError(path string, n int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", filepath.Base(path), n, fmt.Sprintf(format, args...))
}

// splitArgs splits at spaces; 'single quotes' keep what they enclose
// together.
func splitArgs(s string) ([]string, error) {
	args := []string{}
	var cur strings.Builder
	inArg, quoted := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, inArg = !quoted, true
		case r == ' ' && !quoted:
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quoted {
		return nil, errors.New("unterminated quote in args")
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}

func TestSplitArgs(t *testing.T) {
	got, err := splitArgs("run  -pipeline 'verify, dce' -o x")
	if want := []string{"run", "-pipeline", "verify, dce", "-o", "x"}; err != nil || fmt.Sprint(got) != fmt.Sprint(want) || len(got) != len(want) {
		t.Errorf("splitArgs = %q, %v; want %q", got, err, want)
	}
	if _, err := splitArgs("run 'verify"); err == nil {
		t.Error("splitArgs of an unterminated quote: no error")
	}
}
