package cli

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestVersionString(t *testing.T) {
	info := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-11-29T23:00:00Z"},
		{Key: "vcs.modified", Value: "true"}}}
	for _, c := range []struct {
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{info, true, "distpass devel 0123456789ab+dirty 2026-11-29T23:00:00Z " + runtime.Version()},
		{&debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}}, true, "distpass v0.3.0 " + runtime.Version()},
		{nil, false, "distpass devel " + runtime.Version()},
	} {
		if got := versionString(c.info, c.ok); got != c.want {
			t.Errorf("versionString = %q, want %q", got, c.want)
		}
	}
}
