package main

import (
	"fmt"
	"io"
	"os"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
	"github.com/cuvil/cuvil/passes"
)

// pipelineFlags are the flags every command that compiles shares.
type pipelineFlags struct {
	debug  string
	verify bool
}

// load imports a model and runs the pass pipeline on it. It returns the
// names of the passes that ran.
func load(path string, pf pipelineFlags, dump io.Writer) (*ir.Model, []string, error) {
	if path == "" {
		return nil, nil, usagef("-model is required")
	}
	debug, err := passes.ParseDebug(pf.debug)
	if err != nil {
		return nil, nil, usagef("%v", err)
	}
	m, err := onnx.Load(path)
	if err != nil {
		return nil, nil, err
	}
	if dump == nil {
		dump = os.Stdout
	}
	if err := runPasses(m, passes.Options{Verify: pf.verify, Debug: debug, Dump: dump}); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	var ran []string
	for _, name := range passes.PassNames() {
		if debug[name] != passes.ActionOff {
			ran = append(ran, name)
		}
	}
	return m, ran, nil
}

// runPasses runs the pipeline, turning a panic that escapes it into an
// error (conformance runs hundreds of models in one process).
func runPasses(m *ir.Model, opts passes.Options) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in the pass pipeline: %v", r)
		}
	}()
	return passes.Run(m, opts)
}
