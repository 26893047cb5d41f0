package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/cuvil/cuvil/gen"
)

// modulePath is cuvil's module, found in the build info either as the main
// module (go build in a clone, go install ...@version) or as a dependency
// (go tool cuvil in a module that lists it with go get -tool).
const modulePath = "github.com/cuvil/cuvil"

func cmdVersion(args []string, stdout io.Writer) error {
	fs := newFlags("version")
	short := fs.Bool("short", false, "print only the module version")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	bi, _ := debug.ReadBuildInfo()
	v := describeVersion(bi)
	if *short {
		fmt.Fprintln(stdout, v.module)
		return nil
	}
	fmt.Fprint(stdout, v)
	return nil
}

// versionInfo is what cuvil version reports.
type versionInfo struct {
	module   string // the module version: v1.2.3, a pseudo-version, or (devel)
	sum      string // the module's go.sum hash when it came from a module cache
	replaced string // "=> path version" when go.mod replaced the module
	vcs      string // "git 0123abcd... 2026-12-02T03:04:05Z", "+ modified" when the tree had changes
	goVer    string
}

func (v versionInfo) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cuvil %s\n", gen.Version)
	fmt.Fprintf(&b, "module %s %s", modulePath, v.module)
	if v.sum != "" {
		fmt.Fprintf(&b, " %s", v.sum)
	}
	if v.replaced != "" {
		fmt.Fprintf(&b, " %s", v.replaced)
	}
	b.WriteString("\n")
	if v.vcs != "" {
		fmt.Fprintf(&b, "vcs %s\n", v.vcs)
	} else {
		b.WriteString("vcs unknown (built without VCS stamping: go install ...@version, go tool, or -buildvcs=false)\n")
	}
	fmt.Fprintf(&b, "go %s\n", v.goVer)
	return b.String()
}

// describeVersion reads cuvil's module version and VCS revision from the
// build info (nil: none, as in a binary built without module support).
func describeVersion(bi *debug.BuildInfo) versionInfo {
	v := versionInfo{module: "(unknown)", goVer: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		return v
	}
	if bi.GoVersion != "" {
		v.goVer = bi.GoVersion + " " + runtime.GOOS + "/" + runtime.GOARCH
	}
	mod := &bi.Main
	if mod.Path != modulePath {
		mod = nil
		for _, d := range bi.Deps {
			if d.Path == modulePath {
				mod = d
				break
			}
		}
	}
	if mod != nil {
		v.module = mod.Version
		if v.module == "" {
			v.module = "(devel)"
		}
		v.sum = mod.Sum
		if r := mod.Replace; r != nil {
			v.replaced = "=> " + r.Path
			if r.Version != "" {
				v.replaced += " " + r.Version
			}
		}
	}
	var sys, rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs":
			sys = s.Value
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	// The settings describe the main module's checkout: cuvil's own only
	// when cuvil is the main module.
	if rev != "" && bi.Main.Path == modulePath {
		v.vcs = strings.TrimSpace(sys + " " + rev + " " + at)
		if modified {
			v.vcs += " + modified"
		}
	}
	return v
}
