package main

import (
	"io"

	cuvilapi "github.com/cuvil/cuvil"
	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/passes"
)

// pipelineFlags are the flags every command that compiles shares.
type pipelineFlags struct {
	debug  string
	verify bool
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
	return cuvilapi.Load(cuvilapi.Options{Model: model, Verify: pf.verify, Debug: pf.debug, Dump: dump})
}
