package main

import (
	"flag"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestUsageNamesEveryFlag keeps the usage lines (the command's own and
// the README's "The command" section) in step with the flag sets: every
// flag a command defines is named, and every flag named exists.
func TestUsageNamesEveryFlag(t *testing.T) {
	helpOut = io.Discard
	defer func() { helpOut = os.Stderr }()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile(`(?:^|[\s\[])-([a-z][a-z0-9-]*)`)
	for _, c := range commands {
		run([]string{c.name, "-h"}, io.Discard, io.Discard)
		fs := flagSets[c.name]
		if fs == nil {
			t.Errorf("%s: no flag set recorded", c.name)
			continue
		}
		find := func(text, prefix string) string {
			for _, l := range strings.Split(text, "\n") {
				if strings.HasPrefix(l, prefix+c.name+" ") {
					return l
				}
			}
			t.Errorf("no %q line for cuvil %s", prefix, c.name)
			return ""
		}
		line, doc := find(string(readme), "    cuvil "), find(string(src), "//\tcuvil ")
		for where, text := range map[string]string{"usage": c.args, "README": line, "package doc": doc} {
			names := map[string]bool{}
			for _, m := range named.FindAllStringSubmatch(text, -1) {
				names[m[1]] = true
				if fs.Lookup(m[1]) == nil {
					t.Errorf("%s line of cuvil %s names -%s, which it does not define", where, c.name, m[1])
				}
			}
			fs.VisitAll(func(f *flag.Flag) {
				if !names[f.Name] {
					t.Errorf("%s line of cuvil %s does not name -%s", where, c.name, f.Name)
				}
			})
		}
	}
}
