package cuvil

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/cuvil/cuvil/gen"
	"github.com/cuvil/cuvil/passes"
)

// ProfileLite is Options.Profile for the lite profile (docs/lite.md).
const ProfileLite = "lite"

// litePassesOff are the passes the lite profile does not run: fusions
// into cuvil ops, layout and weight packing, whose ops only the full
// runtime's kernels run, and convtranspose-as-conv (its 6-D Transpose is
// for the full runtime's fast 1x1 convs; lite runs ConvTranspose as it
// is). The canonicalisations and folds (BatchNorm and affine ops into
// Conv/Gemm weights) stay.
var litePassesOff = []string{"widen-half", "fuse-channel-shuffle", "fuse-activation", "fuse-gelu", "fuse-layernorm", "fuse-attention", "fuse-conv", "fuse-gemm",
	"fuse-quant", "fuse-scaleshift", "precision", "layout", "fuse-conv-chain", "concat-into", "fuse-se-gate", "fuse-elementwise",
	"compile-trees", "prepack", "convtranspose-as-conv"}

// compileLite is Compile for Profile "lite": it refuses what the lite
// profile cannot run before writing anything, plans the arena, measures
// the code and writes the package.
func compileLite(opts Options) error {
	switch {
	case opts.CShared:
		return fmt.Errorf("cuvil: -profile lite has no C API (-cshared)")
	case opts.Weights == gen.WeightsFile:
		return fmt.Errorf("cuvil: -profile lite embeds its weights as a string constant: drop -weights file")
	case opts.Quantize != "" || opts.Precision != "" || len(opts.KeepF32) > 0:
		return fmt.Errorf("cuvil: -profile lite runs float32 only: drop -quantize and -precision")
	case len(opts.Ops) > 0:
		return fmt.Errorf("cuvil: -profile lite has no custom ops")
	}
	debug := opts.Debug
	for _, p := range litePassesOff {
		if debug != "" {
			debug += ","
		}
		debug += p + "/" + passes.ActionOff
	}
	opts.Debug = debug
	m, ran, err := load(opts, nil)
	if err != nil {
		return err
	}
	lo := gen.LiteOptions{Package: opts.Pkg, Source: filepath.Base(opts.Model), RAMBudget: opts.RAMBudget, Passes: ran}
	files, rep, err := gen.GenerateLite(m, lo)
	if err != nil {
		return fmt.Errorf("%s: %w", opts.Model, err)
	}
	goarch := opts.LiteCodeGOARCH
	if goarch == "" {
		goarch = "arm"
	}
	if goarch != "none" {
		rep.CodeBytes, rep.CodeTarget, err = MeasureLiteCode(files, opts.Pkg, goarch)
		if err != nil {
			rep.CodeBytes, rep.CodeNote = -1, err.Error()
		}
		files["doc.go"] = gen.LiteDoc(m, lo, rep)
	} else {
		rep.CodeNote = "not asked for"
		files["doc.go"] = gen.LiteDoc(m, lo, rep)
	}
	if err := gen.WritePackageWith(opts.Out, files, gen.WriteOptions{Force: opts.Force}); err != nil {
		return err
	}
	if opts.Verbose != nil {
		w := opts.Verbose
		fmt.Fprintf(w, "%s: -profile lite, %d nodes, passes %v\n", opts.Model, rep.Nodes, ran)
		fmt.Fprintf(w, "  weights (flash) %9d bytes  %s\n", rep.WeightsBytes, gen.HumanBytes(rep.WeightsBytes))
		fmt.Fprintf(w, "  arena (RAM)     %9d bytes  %s (values live at once at most %d bytes, at node %q)\n", rep.ArenaBytes, gen.HumanBytes(rep.ArenaBytes), rep.LiveBytes, rep.PeakNode)
		if rep.CodeBytes >= 0 {
			fmt.Fprintf(w, "  code (flash)    %9d bytes  %s (this package's functions, %s, go tool nm -size)\n", rep.CodeBytes, gen.HumanBytes(rep.CodeBytes), rep.CodeTarget)
		} else {
			fmt.Fprintf(w, "  code: not measured (%s)\n", rep.CodeNote)
		}
		fmt.Fprintf(w, "wrote package %s to %s (%d files)\n", opts.Pkg, opts.Out, len(files))
	}
	return nil
}

// MeasureLiteCode builds a program calling a lite package's New,
// NewSession and Run for goarch (GOARM 7 for arm) and returns the bytes of
// the package's own linked functions (text symbols in go tool nm -size),
// and the target as "linux/arm GOARM=7".
func MeasureLiteCode(files map[string][]byte, pkg, goarch string) (int64, string, error) {
	dir, err := os.MkdirTemp("", "cuvil-litesize-")
	if err != nil {
		return 0, "", err
	}
	defer os.RemoveAll(dir)
	pdir := filepath.Join(dir, pkg)
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		return 0, "", err
	}
	for name, b := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		if err := os.WriteFile(filepath.Join(pdir, name), b, 0o644); err != nil {
			return 0, "", err
		}
	}
	main := "package main\n\nimport \"litesize/" + pkg + "\"\n\nfunc main() {\n\tm, err := " + pkg + ".New()\n\tif err != nil {\n\t\tpanic(err)\n\t}\n\ts, err := m.NewSession(nil)\n\tif err != nil {\n\t\tpanic(err)\n\t}\n\ts.Run()\n\tprintln(s.Output(0)[0])\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
		return 0, "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module litesize\n\ngo 1.22\n"), 0o644); err != nil {
		return 0, "", err
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if p, err := exec.LookPath("go"); err == nil {
		goBin = p
	}
	env := append(os.Environ(), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-buildvcs=false")
	target := "linux/" + goarch
	if goarch == "arm" {
		env = append(env, "GOARM=7")
		target += " GOARM=7"
	}
	exe := filepath.Join(dir, "prog")
	build := exec.Command(goBin, "build", "-trimpath", "-o", exe, ".")
	build.Dir, build.Env = dir, env
	if out, err := build.CombinedOutput(); err != nil {
		return 0, "", fmt.Errorf("building a program to measure it: %v: %s", err, bytes.TrimSpace(out))
	}
	nm := exec.Command(goBin, "tool", "nm", "-size", exe)
	nm.Env = env
	out, err := nm.Output()
	if err != nil {
		return 0, "", fmt.Errorf("go tool nm: %v", err)
	}
	total, err := liteTextBytes(out, "litesize/"+pkg+".")
	return total, target, err
}

// liteTextBytes sums the sizes of the text (T/t) symbols of go tool nm
// -size output whose names start with prefix.
func liteTextBytes(nm []byte, prefix string) (int64, error) {
	var total int64
	sc := bufio.NewScanner(bytes.NewReader(nm))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// address size type name
		if len(f) < 4 || (f[2] != "T" && f[2] != "t") || !strings.HasPrefix(f[3], prefix) {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("go tool nm: %q: %v", sc.Text(), err)
		}
		total += n
	}
	if total == 0 {
		return 0, fmt.Errorf("go tool nm: no text symbols of %s", strings.TrimSuffix(prefix, "."))
	}
	return total, nil
}
