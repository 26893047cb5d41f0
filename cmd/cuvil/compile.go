package main

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"

	"github.com/cuvil/cuvil/gen"
	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/passes"
)

func cmdCompile(args []string, stdout io.Writer) error {
	fs := newFlags("compile")
	model := fs.String("model", "", "ONNX model file")
	pkg := fs.String("pkg", "", "Go package name (default: the base name of -out)")
	out := fs.String("out", "", "folder of the generated package (replaced atomically)")
	verbose := fs.Bool("v", false, "print what was generated")
	var pf pipelineFlags
	fs.BoolVar(&pf.verify, "verify", false, "verify the IR before and after every pass")
	fs.StringVar(&pf.debug, "d", "", "pass debugging: pass/off|dump|time, comma separated")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	if *out == "" {
		return usagef("-out is required")
	}
	if *pkg == "" {
		*pkg = filepath.Base(filepath.Clean(*out))
	}
	m, ran, err := load(*model, pf, stdout)
	if err != nil {
		return err
	}
	files, err := gen.Generate(m, gen.Options{Package: *pkg, Source: filepath.Base(*model), Passes: ran})
	if err != nil {
		return fmt.Errorf("%s: %w", *model, err)
	}
	if err := gen.WritePackage(*out, files); err != nil {
		return err
	}
	if *verbose {
		names := make([]string, 0, len(files))
		total := 0
		for name, b := range files {
			names = append(names, name)
			total += len(b)
		}
		sort.Strings(names)
		fmt.Fprintf(stdout, "%s: %d nodes, passes %v\n", *model, len(m.Graph.Nodes), ran)
		for _, name := range names {
			fmt.Fprintf(stdout, "  %-24s %9d bytes\n", name, len(files[name]))
		}
		fmt.Fprintf(stdout, "wrote package %s to %s (%d files, %d bytes)\n", *pkg, *out, len(files), total)
	}
	return nil
}

func cmdInspect(args []string, stdout io.Writer) error {
	fs := newFlags("inspect")
	model := fs.String("model", "", "ONNX model file")
	all := fs.Bool("print-after-all", false, "print the IR after every pass")
	var pf pipelineFlags
	fs.BoolVar(&pf.verify, "verify", false, "verify the IR before and after every pass")
	fs.StringVar(&pf.debug, "d", "", "pass debugging: pass/off|dump|time, comma separated")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	if *all {
		dumps := ""
		for _, p := range passNamesFor(pf.debug) {
			if dumps != "" {
				dumps += ","
			}
			dumps += p + "/dump"
		}
		if pf.debug != "" && dumps != "" {
			pf.debug += ","
		}
		pf.debug += dumps
	}
	m, _, err := load(*model, pf, stdout)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "# final IR")
	return ir.Print(stdout, m)
}

// passNamesFor lists the pipeline's passes that the -d value does not
// mention yet.
func passNamesFor(debug string) []string {
	set, err := passes.ParseDebug(debug)
	if err != nil {
		return nil // load reports the error
	}
	var out []string
	for _, name := range passes.PassNames() {
		if _, ok := set[name]; !ok {
			out = append(out, name)
		}
	}
	return out
}
