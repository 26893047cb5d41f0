package main

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/gen"
)

func TestVersion(t *testing.T) {
	code, out, stderr := cuvil(t, "version")
	if code != 0 || !strings.HasPrefix(out, "cuvil "+gen.Version+"\nmodule github.com/cuvil/cuvil ") {
		t.Fatalf("cuvil version: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	code, out, _ = cuvil(t, "version", "-short")
	if code != 0 || strings.Count(out, "\n") != 1 || out == "\n" {
		t.Errorf("cuvil version -short: exit %d, %q", code, out)
	}
	if code, _, _ := cuvil(t, "version", "extra"); code != 2 {
		t.Errorf("cuvil version extra: exit %d, want 2", code)
	}
}

func TestDescribeVersion(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-12-02T03:04:05Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		want []string
	}{
		{"built in a clone", &debug.BuildInfo{GoVersion: "go1.24.0", Main: debug.Module{Path: modulePath, Version: "(devel)"}, Settings: vcs},
			[]string{"module github.com/cuvil/cuvil (devel)\n", "vcs git 0123456789abcdef0123456789abcdef01234567 2026-12-02T03:04:05Z + modified\n", "go go1.24.0 "}},
		{"go install @version", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v0.3.1", Sum: "h1:abc="}},
			[]string{"module github.com/cuvil/cuvil v0.3.1 h1:abc=\n", "vcs unknown"}},
		{"go tool in another module", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app"}, Settings: vcs,
			Deps: []*debug.Module{{Path: "golang.org/x/mod", Version: "v0.33.0"}, {Path: modulePath, Version: "v0.3.1-0.20261202030405-0123456789ab", Sum: "h1:x="}}},
			[]string{"module github.com/cuvil/cuvil v0.3.1-0.20261202030405-0123456789ab h1:x=\n", "vcs unknown"}},
		{"replaced", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{{Path: modulePath, Version: "v0.0.0", Replace: &debug.Module{Path: "../cuvil"}}}},
			[]string{"module github.com/cuvil/cuvil v0.0.0 => ../cuvil\n"}},
		{"no build info", nil, []string{"module github.com/cuvil/cuvil (unknown)\n"}},
	} {
		got := describeVersion(c.bi).String()
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q does not contain %q", c.name, got, w)
			}
		}
	}
}
