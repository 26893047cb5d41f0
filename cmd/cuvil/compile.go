package main

import (
	"fmt"
	"io"
	"os"

	cuvilapi "github.com/cuvil/cuvil"
	"github.com/cuvil/cuvil/gen"
)

// opFlags collects repeated -op domain::Type=import/path.Func flags.
type opFlags []cuvilapi.Op

func (o *opFlags) String() string { return fmt.Sprint([]cuvilapi.Op(*o)) }

func (o *opFlags) Set(s string) error {
	op, err := cuvilapi.ParseOp(s)
	if err != nil {
		return err
	}
	*o = append(*o, op)
	return nil
}

func cmdCompile(args []string, stdout io.Writer) error {
	fs := newFlags("compile")
	model := fs.String("model", "", "ONNX model file")
	pkg := fs.String("pkg", "", "Go package name (default: the base name of -out)")
	out := fs.String("out", "", "folder of the generated package (replaced atomically)")
	verbose := fs.Bool("v", false, "print what was generated")
	var maxArena, maxWeights bytesFlag
	fs.Var(&maxArena, "max-arena", "largest memory plan to accept (default 8GiB; -1: no limit)")
	fs.Var(&maxWeights, "max-weights", "largest weights.bin to write (default 4GiB; -1: no limit)")
	maxNodes := fs.Int64("max-nodes", 0, "most nodes once model-local functions are inlined (default 2097152; -1: no limit)")
	maxDepth := fs.Int("max-depth", 0, "deepest nesting of subgraphs (default 256; -1: no limit)")
	force := fs.Bool("force", false, "replace -out even when it holds files cuvil did not write")
	cshared := fs.Bool("cshared", false, "also write capi/ (C API, build with -buildmode=c-shared) and python/PKG.py")
	var ops opFlags
	fs.Var(&ops, "op", "custom op: domain::Type=import/path.Func (repeatable; see cuvil inspect -ops)")
	var pf pipelineFlags
	fs.Var(&pf.winograd, "winograd", winogradUsage)
	fs.BoolVar(&pf.verify, "verify", false, "verify the IR before and after every pass")
	fs.StringVar(&pf.debug, "d", "", "pass debugging: pass/off|dump|time, comma separated")
	pf.quantFlags(fs)
	pf.precisionFlags(fs)
	allowOps := fs.String("allow-ops", "", "op allow-list: a file (one domain:op[:versions] per line, # comments), entries separated by commas, or default (docs/allow-ops.txt)")
	sandbox := fs.Bool("sandbox", false, "for untrusted models: no external data, -max-depth 4, -max-dim 16777216, -allow-ops default unless given")
	weights := fs.String("weights", "embed", "where the weights live: embed (in the package, read in place by New) or file (weights.bin beside the package or at -weights-path, loaded by NewFromFile/NewFromReader)")
	weightsPath := fs.String("weights-path", "", "with -weights file: write weights.bin here instead of beside the package")
	profile := fs.String("profile", "", "lite: a pure-Go package for microcontroller-class targets (static shapes, float32, no control flow; one arena, no unsafe/sync/goroutines; docs/lite.md); -v prints its size report on stderr")
	ramBudget := fs.String("ram-budget", "", "with -profile lite: refuse a memory plan whose arena needs more (512KB, 2MB, bytes)")
	maxDim := fs.Int64("max-dim", 0, "largest constant dim of any value (default: none, 16777216 with -sandbox; -1: no limit)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	if *out == "" {
		return usagef("-out is required")
	}
	if *weights != gen.WeightsEmbed && *weights != gen.WeightsFile {
		return usagef("-weights %q: want embed or file", *weights)
	}
	if *weightsPath != "" && *weights != gen.WeightsFile {
		return usagef("-weights-path needs -weights file")
	}
	if err := pf.check(*model); err != nil {
		return err
	}
	opts := cuvilapi.Options{Model: *model, Pkg: *pkg, Out: *out, Ops: ops, CShared: *cshared, Force: *force, MaxArena: int64(maxArena), MaxWeights: int64(maxWeights), MaxNodes: *maxNodes, MaxDepth: *maxDepth, Winograd: pf.winograd.mode.String(),
		Verify: pf.verify, Debug: pf.debug, Dump: stdout, Progress: progressOut}
	pf.apply(&opts)
	if *verbose {
		opts.Verbose = stdout
	}
	opts.Sandbox, opts.MaxDim = *sandbox, *maxDim
	opts.Weights, opts.WeightsPath = *weights, *weightsPath
	opts.Profile = *profile
	if *ramBudget != "" {
		if *profile != cuvilapi.ProfileLite {
			return usagef("-ram-budget needs -profile lite")
		}
		n, err := gen.ParseSize(*ramBudget)
		if err != nil {
			return usagef("-ram-budget: %v", err)
		}
		opts.RAMBudget = n
	}
	if *verbose && *profile == cuvilapi.ProfileLite {
		opts.Verbose = os.Stderr // the size report
	}
	if *allowOps != "" {
		a, err := cuvilapi.ParseAllowOps(*allowOps)
		if err != nil {
			return usagef("-allow-ops: %v", err)
		}
		opts.AllowOps = a
	}
	return cuvilapi.Compile(opts)
}

// bytesFlag is a size flag: 8GiB, 512MiB, a byte count, or -1.
type bytesFlag int64

func (b *bytesFlag) String() string {
	if *b == 0 {
		return ""
	}
	return gen.FormatBytes(int64(*b))
}

func (b *bytesFlag) Set(s string) error {
	v, err := gen.ParseBytes(s)
	*b = bytesFlag(v)
	return err
}

// progressOut receives compile's progress line (a variable for tests).
var progressOut io.Writer = os.Stderr
