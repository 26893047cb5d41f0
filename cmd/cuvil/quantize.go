package main

import (
	"fmt"
	"io"
	"os"

	cuvilapi "github.com/cuvil/cuvil"
)

// cmdQuantize writes the int8 decisions of -quantize int8 as a QDQ ONNX
// model (cuvil.WriteQDQ).
func cmdQuantize(args []string, stdout io.Writer) error {
	fs := newFlags("quantize")
	model := fs.String("model", "", "ONNX model file")
	out := fs.String("o", "", "the QDQ .onnx file to write")
	var pf pipelineFlags
	pf.quantFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	if *model == "" {
		return usagef("-model is required")
	}
	if *out == "" {
		return usagef("-o is required")
	}
	if pf.calibrate == "" {
		return usagef("-calibrate is required")
	}
	if pf.quantize == "" {
		pf.quantize = "int8"
	}
	opts := cuvilapi.Options{Model: *model}
	pf.apply(&opts)
	b, err := cuvilapi.WriteQDQ(opts)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes)\n", *out, len(b))
	return nil
}
