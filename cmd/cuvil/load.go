package main

import (
	"flag"
	"io"
	"strings"

	cuvilapi "github.com/cuvil/cuvil"
	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/passes"
)

// pipelineFlags are the flags every command that compiles shares.
type pipelineFlags struct {
	debug    string
	verify   bool
	winograd winogradFlag // the prepack pass's Winograd choice
	// -quantize int8 -calibrate DIR[,DIR...] -observer minmax|percentile
	// -percentile P -quantize-skip NODE|OP[,...] -quantize-reduce-range
	quantize, calibrate, observer, skip string
	percentile                          float64
	reduceRange                         bool
	// -precision bf16|fp16 -keep-f32 NODE|OP[,...]
	precision, keepF32 string
}

// precisionFlags registers the precision flags on fs.
func (pf *pipelineFlags) precisionFlags(fs *flag.FlagSet) {
	fs.StringVar(&pf.precision, "precision", "", "bf16 or fp16: mixed precision; sensitive ops whose inputs are half (Softmax, normalisations, reductions, Exp/Log, attention) run in f32 with explicit casts; conv/GEMM weights stored half in weights.bin (bf16: bf16 panels and kernels; fp16: f16, widened to f32 at New)")
	fs.StringVar(&pf.keepF32, "keep-f32", "", "nodes (by name) or op types that run in f32 whatever -precision says, comma separated")
}

// quantFlags registers the quantization flags on fs.
func (pf *pipelineFlags) quantFlags(fs *flag.FlagSet) {
	fs.StringVar(&pf.quantize, "quantize", "", "int8: static post-training quantization of Conv/Gemm/MatMul with constant weights, calibrated on -calibrate")
	fs.StringVar(&pf.calibrate, "calibrate", "", "calibration data for -quantize: folders (or globs) of input_K.pb files, comma separated; a folder of test_data_set_* folders stands for them")
	fs.StringVar(&pf.observer, "observer", "minmax", "activation range observer for -quantize: minmax or percentile")
	fs.Float64Var(&pf.percentile, "percentile", 99.99, "the percentile observer's percentile")
	fs.StringVar(&pf.skip, "quantize-skip", "", "nodes (by name) or op types (Conv, Gemm, MatMul) that -quantize keeps float, comma separated")
	fs.BoolVar(&pf.reduceRange, "quantize-reduce-range", false, "quantize weights to 7 bits ([-64, 64], ONNX Runtime's reduce_range): faster int8 GEMMs on AVX2 CPUs without VNNI, slightly less accurate")
}

// apply sets the pipeline flags on opts.
func (pf pipelineFlags) apply(opts *cuvilapi.Options) {
	opts.Verify, opts.Debug, opts.Winograd = pf.verify, pf.debug, pf.winograd.mode.String()
	opts.Quantize, opts.Observer, opts.Percentile = pf.quantize, pf.observer, pf.percentile
	opts.Calibrate, opts.QuantizeSkip = splitList(pf.calibrate), splitList(pf.skip)
	opts.QuantizeReduceRange = pf.reduceRange
	opts.Precision, opts.KeepF32 = pf.precision, splitList(pf.keepF32)
}

func splitList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// check makes a missing -model or a bad -d flag a usage error.
func (pf pipelineFlags) check(model string) error {
	if model == "" {
		return usagef("-model is required")
	}
	if _, err := passes.ParseDebug(pf.debug); err != nil {
		return usagef("%v", err)
	}
	if _, err := passes.ParsePrecision(pf.precision); err != nil {
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
	opts := cuvilapi.Options{Model: model, Dump: dump}
	pf.apply(&opts)
	return cuvilapi.Load(opts)
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
