package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"distpass": main,
	})
}

// TestScripts runs the CLI scripts in testdata/script: each is a txtar
// archive of distpass commands (the real main, run in-process by
// testscript), with the examples directory copied in as examples/ and the
// Paddle program files of interop/paddle/testdata as paddle/ (binary
// files, which txtar does not hold).
func TestScripts(t *testing.T) {
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	paddleFiles, err := filepath.Abs("../../interop/paddle/testdata")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		// DISTPASS_UPDATE=1 rewrites the files that cmp compares with,
		// as for the golden cases; read the diff.
		UpdateScripts: os.Getenv("DISTPASS_UPDATE") != "",
		Setup: func(env *testscript.Env) error {
			if err := copyDir(examples, filepath.Join(env.WorkDir, "examples")); err != nil {
				return err
			}
			return copyDir(paddleFiles, filepath.Join(env.WorkDir, "paddle"))
		},
	})
}

func copyDir(from, to string) error {
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
