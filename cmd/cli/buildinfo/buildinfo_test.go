package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestResolveBuild(t *testing.T) {
	vcs := func(version string, kv ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "m", Version: version}}
		for i := 0; i+1 < len(kv); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return bi
	}
	tests := map[string]struct {
		v, c, d string
		bi      *debug.BuildInfo
		want    [3]string
	}{
		"ldflags win over build info": {"v0.2.0", "abc", "2026-11-24T08:00:00Z",
			vcs("v9.9.9", "vcs.revision", "def", "vcs.time", "2020-01-01T00:00:00Z"),
			[3]string{"v0.2.0", "abc", "2026-11-24T08:00:00Z"}},
		"go install pkg@version: module version, no vcs": {"", "", "", vcs("v0.2.0"),
			[3]string{"v0.2.0", Unknown, Unknown}},
		"go build in a clone: pseudo-version, revision and time": {"", "", "",
			vcs("v0.0.0-20261124080000-0123456789ab", "vcs.revision", "0123456789abcdef", "vcs.time", "2026-11-24T08:00:00Z", "vcs.modified", "false"),
			[3]string{"v0.0.0-20261124080000-0123456789ab", "0123456789abcdef", "2026-11-24T08:00:00Z"}},
		"a modified tree says dirty": {"", "", "",
			vcs("(devel)", "vcs.revision", "0123", "vcs.time", "2026-11-24T08:00:00Z", "vcs.modified", "true"),
			[3]string{"devel", "0123-dirty", "2026-11-24T08:00:00Z"}},
		"nothing known": {"", "", "", nil, [3]string{"devel", Unknown, Unknown}},
		"only the version stamped: vcs fills the rest": {"v0.3.0", "", "",
			vcs("(devel)", "vcs.revision", "0123", "vcs.time", "2026-11-24T08:00:00Z"),
			[3]string{"v0.3.0", "0123", "2026-11-24T08:00:00Z"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			v, c, d := Resolve(tc.v, tc.c, tc.d, tc.bi)
			if got := [3]string{v, c, d}; got != tc.want {
				t.Errorf("Resolve = %q, want %q", got, tc.want)
			}
		})
	}
}
