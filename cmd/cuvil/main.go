// Command cuvil compiles ONNX models into self-contained Go packages, and
// runs, checks and benchmarks them.
//
// Usage:
//
//	cuvil compile -model M.onnx -pkg NAME -out DIR [-force] [-max-arena 8GiB] [-max-weights 4GiB] [-max-nodes N] [-max-depth N] [-max-dim N] [-sandbox] [-allow-ops FILE|LIST] [-v] [-cshared] [-op dom::Op=path.Func]... [-verify] [-d=pass/off|dump|time] [-winograd=auto|on|off] [-quantize int8 -calibrate DIR,... [-observer minmax|percentile] [-percentile 99.99] [-quantize-skip NODE|OP,...] [-quantize-reduce-range]] [-precision bf16|fp16] [-keep-f32 NODE|OP,...] [-weights embed|file] [-weights-path P] [-profile lite [-ram-budget 512KB]]
//	cuvil inspect -model M.onnx [-ops] [-allow-list] [-stats] [-memplan] [-memplan-svg F.svg] [-graph F.dot] [-graph-svg F.svg|F.html] [-print-after-all] [-types [-precision bf16|fp16] [-keep-f32 NODE|OP,...]] [-verify] [-d=...] [-winograd=auto|on|off]
//	cuvil run -model M.onnx -data DIR [-out DIR2] [-d=...] [-winograd=auto|on|off] [-quantize int8 -calibrate DIR,... [-observer minmax|percentile] [-percentile 99.99] [-quantize-skip NODE|OP,...] [-quantize-reduce-range]] [-precision bf16|fp16] [-keep-f32 NODE|OP,...] [-goarch arm64] [-tags purego]
//	cuvil check -model M.onnx -data DIR [-rtol 1e-3] [-atol auto|1e-5] [-verify] [-d=...] [-winograd=auto|on|off] [-quantize int8 -calibrate DIR,... [-observer minmax|percentile] [-percentile 99.99] [-quantize-skip NODE|OP,...] [-quantize-reduce-range]] [-precision bf16|fp16] [-keep-f32 NODE|OP,...] [-goarch arm64] [-tags purego]
//	cuvil conformance [-report FILE.md] [-run REGEXP] [-xfail FILE] [-skip FILE] [-rtol 1e-3] [-atol 1e-7] [-winograd=auto|on|off] [-precision bf16|fp16] [-keep-f32 NODE|OP,...] [-goarch arm64] [-tags purego] DIR...
//	cuvil bench -model M.onnx [-threads N] [-spin D] [-runs R] [-warmup W] [-dim name=V ...] [-d=...] [-winograd=auto|on|off] [-quantize int8 -calibrate DIR,... [-observer minmax|percentile] [-percentile 99.99] [-quantize-skip NODE|OP,...] [-quantize-reduce-range]] [-precision bf16|fp16] [-keep-f32 NODE|OP,...] [-profile [-top N]] [-trace F.json] [-deadline D] [-cpu] [-goarch arm64] [-tags purego]
//	cuvil quantize -model M.onnx -o M.int8.onnx [-quantize int8] -calibrate DIR,... [-observer minmax|percentile] [-percentile 99.99] [-quantize-skip NODE|OP,...] [-quantize-reduce-range]
//	cuvil convert -in T.pb|T.cuvt -out T.cuvt|T.pb [-raw]
//	cuvil version [-short]
//
// Errors go to standard error with exit status 1; usage errors exit 2.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/cuvil/cuvil/gen"
	"github.com/cuvil/cuvil/passes"
)

// errUsage marks errors that should exit with status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

type command struct {
	name string
	args string
	doc  string
	run  func(args []string, stdout io.Writer) error
}

var commands []command

func init() {
	commands = []command{
		{"compile", "-model M.onnx -pkg NAME -out DIR [-force] [-max-arena 8GiB] [-max-weights 4GiB] [-max-nodes N] [-max-depth N] [-max-dim N] [-sandbox] [-allow-ops FILE|LIST] [-v] [-cshared] [-op dom::Op=path.Func]... [-verify] [-d=pass/off|dump|time] [-winograd=auto|on|off] [-quantize int8 -calibrate DIR,... [-observer minmax|percentile] [-percentile 99.99] [-quantize-skip NODE|OP,...] [-quantize-reduce-range]] [-precision bf16|fp16] [-keep-f32 NODE|OP,...] [-weights embed|file] [-weights-path P] [-profile lite [-ram-budget 512KB]]", "compile a model into a Go package", cmdCompile},
		{"inspect", "-model M.onnx [-ops] [-allow-list] [-stats] [-memplan] [-memplan-svg F.svg] [-graph F.dot] [-graph-svg F.svg|F.html] [-print-after-all] [-types [-precision bf16|fp16] [-keep-f32 NODE|OP,...]] [-verify] [-d=...] [-winograd=auto|on|off]", "print the IR after the pass pipeline", cmdInspect},
		{"run", "-model M.onnx -data DIR [-out DIR2] [-d=...] [-winograd=auto|on|off] [-quantize int8 -calibrate DIR,... [-observer minmax|percentile] [-percentile 99.99] [-quantize-skip NODE|OP,...] [-quantize-reduce-range]] [-precision bf16|fp16] [-keep-f32 NODE|OP,...] [-goarch arm64] [-tags purego]", "run a model on input_K.pb files, write output_K.pb", cmdRun},
		{"check", "-model M.onnx -data DIR [-rtol 1e-3] [-atol auto|1e-5] [-verify] [-d=...] [-winograd=auto|on|off] [-quantize int8 -calibrate DIR,... [-observer minmax|percentile] [-percentile 99.99] [-quantize-skip NODE|OP,...] [-quantize-reduce-range]] [-precision bf16|fp16] [-keep-f32 NODE|OP,...] [-goarch arm64] [-tags purego]", "run a model and compare with output_K.pb", cmdCheck},
		{"conformance", "[-report FILE.md] [-run REGEXP] [-xfail FILE] [-skip FILE] [-rtol 1e-3] [-atol 1e-7] [-winograd=auto|on|off] [-precision bf16|fp16] [-keep-f32 NODE|OP,...] [-goarch arm64] [-tags purego] DIR...", "check every ONNX test folder under the DIRs", cmdConformance},
		{"bench", "-model M.onnx [-threads N] [-spin D] [-runs R] [-warmup W] [-dim name=V ...] [-d=...] [-winograd=auto|on|off] [-quantize int8 -calibrate DIR,... [-observer minmax|percentile] [-percentile 99.99] [-quantize-skip NODE|OP,...] [-quantize-reduce-range]] [-precision bf16|fp16] [-keep-f32 NODE|OP,...] [-profile [-top N]] [-trace F.json] [-deadline D] [-cpu] [-goarch arm64] [-tags purego]", "time the compiled model on random inputs", cmdBench},
		{"quantize", "-model M.onnx -o M.int8.onnx [-quantize int8] -calibrate DIR,... [-observer minmax|percentile] [-percentile 99.99] [-quantize-skip NODE|OP,...] [-quantize-reduce-range]", "write a model's -quantize int8 decisions as a QDQ ONNX model (for ONNX Runtime)", cmdQuantize},
		{"convert", "-in T.pb|T.cuvt -out T.cuvt|T.pb [-raw]", "convert a tensor file (TensorProto, harness format, raw data)", cmdConvert},
		{"version", "[-short]", "print cuvil's version, its module version and VCS revision", cmdVersion},
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: cuvil <command> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-12s %s\n  %-12s   %s\n", c.name, c.doc, "", c.args)
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, passes.Help())
}

func main() {
	// An interrupted command removes the temporary folders it made (a
	// half-written package, a harness's build module) before it exits.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		gen.RemoveTempDirs()
		fmt.Fprintf(os.Stderr, "cuvil: %v: stopped, temporary files removed\n", s)
		code := 130
		if s == syscall.SIGTERM {
			code = 143
		}
		os.Exit(code)
	}()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "help" {
		usage(stderr)
		return 2
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		err := c.run(args[1:], stdout)
		if err == nil {
			return 0
		}
		if errors.Is(err, flag.ErrHelp) {
			return 2
		}
		if err == errSilent {
			return 1
		}
		fmt.Fprintf(stderr, "cuvil %s: %v\n", c.name, err)
		var u usageError
		if errors.As(err, &u) {
			fmt.Fprintf(stderr, "usage: cuvil %s %s\n", c.name, c.args)
			return 2
		}
		return 1
	}
	fmt.Fprintf(stderr, "cuvil: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

// newFlags returns a flag set whose parse errors are usage errors.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("cuvil "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	flagSets[name] = fs
	return fs
}

// flagSets holds each command's flag set once it has run (the usage test
// checks the usage lines name every flag).
var flagSets = map[string]*flag.FlagSet{}

// helpOut receives -h's flag list (a variable for tests).
var helpOut io.Writer = os.Stderr

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(helpOut)
			fs.PrintDefaults()
			return err
		}
		return usagef("%v", err)
	}
	return nil
}

// dimFlags collects repeated -dim name=V flags.
type dimFlags map[string]int

func (d dimFlags) String() string {
	var parts []string
	for k, v := range d {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v))
	}
	return strings.Join(parts, ",")
}

func (d dimFlags) Set(s string) error {
	name, val, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("want name=V, have %q", s)
	}
	var n int
	if _, err := fmt.Sscanf(val, "%d", &n); err != nil || n < 0 || fmt.Sprint(n) != val {
		return fmt.Errorf("dim %s: %q is not a size", name, val)
	}
	d[name] = n
	return nil
}
