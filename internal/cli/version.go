package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// runVersion prints the module version, the VCS revision the binary was
// built from (with +dirty for a modified tree) and the Go version, as the
// build recorded them.
func runVersion(env *Env, args []string) int {
	fs := newFlagSet(env, "version", "",
		`Version prints distpass's version: the module version (devel for a build
from a checkout), the VCS revision and time of the build when Go recorded
them, and the Go version.`)
	if code, ok := parseFlags(env, fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "distpass version: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	fmt.Fprintln(env.Stdout, versionString(debug.ReadBuildInfo()))
	return ExitOK
}

func versionString(info *debug.BuildInfo, ok bool) string {
	version, rev, when, dirty := "devel", "", "", false
	if ok {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			version = v
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	out := "distpass " + version
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "+dirty"
		}
		out += " " + rev
		if when != "" {
			out += " " + when
		}
	}
	return out + " " + runtime.Version()
}
