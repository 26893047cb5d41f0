package main

import (
	"io"

	cuvilapi "github.com/cuvil/cuvil"
	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/passes"
)

// pipelineFlags are the flags every command that compiles shares.
type pipelineFlags struct {
	debug    string
	verify   bool
	winograd winogradFlag // the prepack pass's Winograd choice
}

// check makes a missing -model or a bad -d flag a usage error.
func (pf pipelineFlags) check(model string) error {
	if model == "" {
		return usagef("-model is required")
	}
	if _, err := passes.ParseDebug(pf.debug); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// load imports a model and runs the pass pipeline on it (cuvil.Load). It
// returns the names of the passes that ran.
func load(model string, pf pipelineFlags, dump io.Writer) (*ir.Model, []string, error) {
	if err := pf.check(model); err != nil {
		return nil, nil, err
	}
	return cuvilapi.Load(cuvilapi.Options{Model: model, Verify: pf.verify, Debug: pf.debug, Dump: dump, Winograd: pf.winograd.mode.String()})
}

// winogradFlag is -winograd=auto|on|off; a bare -winograd means on.
type winogradFlag struct{ mode passes.WinogradMode }

func (f *winogradFlag) String() string { return f.mode.String() }

func (f *winogradFlag) Set(s string) (err error) {
	f.mode, err = passes.ParseWinograd(s)
	return err
}

func (f *winogradFlag) IsBoolFlag() bool { return true }

// winogradUsage is the -winograd flag's help text.
const winogradUsage = "Winograd F(4x4,3x3) (NHWC: or F(2x2,3x3) on small maps and maps over 64x64) for 3x3 stride-1 convs: auto (where it beats im2col+GEMM and is accurate), on or off"
