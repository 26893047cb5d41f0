package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cuvil/cuvil/internal/harness"
	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
)

// cmdConvert converts a tensor between an ONNX TensorProto (.pb), the
// harness format (.cuvt) and, one way, raw little-endian data (-raw), which
// is what a program that embeds a sample needs.
func cmdConvert(args []string, stdout io.Writer) error {
	fs := newFlags("convert")
	in := fs.String("in", "", "input tensor: .pb (TensorProto) or .cuvt")
	out := fs.String("out", "", "output file: .pb or .cuvt")
	raw := fs.Bool("raw", false, "write only the packed little-endian elements")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *in == "" || *out == "" || fs.NArg() > 0 {
		return usagef("-in and -out are required")
	}
	var t *ir.Tensor
	var err error
	switch {
	case strings.HasSuffix(*in, ".pb"):
		t, err = onnx.ReadTensorFile(*in)
	case strings.HasSuffix(*in, ".cuvt"):
		t, err = harness.ReadTensorFile(*in)
	default:
		return usagef("-in: want a .pb or .cuvt file, have %q", *in)
	}
	if err != nil {
		return err
	}
	switch {
	case *raw:
		if t.DType == ir.String {
			return fmt.Errorf("%s: string tensors have no raw form", *in)
		}
		return writeFileAtomic(*out, t.Raw)
	case strings.HasSuffix(*out, ".pb"):
		return onnx.WriteTensorFile(*out, t)
	case strings.HasSuffix(*out, ".cuvt"):
		return harness.WriteTensorFile(*out, t)
	}
	return usagef("-out: want a .pb or .cuvt file (or -raw), have %q", *out)
}

// writeFileAtomic writes through a temporary file and a rename.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
