package cuvil

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/cuvil/cuvil/gen"
	"github.com/cuvil/cuvil/internal/halfmodel"
	"github.com/cuvil/cuvil/internal/harness"
	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
)

// TestFP16Models converts each shared conv model to an all-fp16 ONNX
// model (internal/halfmodel: f16 weights and activations, Casts at the
// edges, as onnxconverter-common's keep_io_types=True writes it), compiles
// it, and compares its outputs with ONNX Runtime's on the same fp16 model
// (../shared/tools/ort/bench.sh), on the model's test_data_set_0 input and
// on one seeded random input ORT draws. Tolerance: relative L2 <= 1e-2 and
// max abs <= 1e-2 * max(1, max |ref|). Why that figure: f16 keeps 11
// significant bits (unit roundoff u = 2^-11 = 4.9e-4); ORT rounds every
// intermediate activation to f16 while Cuvil keeps them f32 (widen-half),
// so the two differ by about the accumulated per-layer roundings, of
// order sqrt(layers) * u relative (~3.5e-3 for 50 layers): 1e-2 leaves a
// factor of ~3 and still catches a wrong kernel or weight (those
// are O(1); a lost final rounding, ~u relative, is below it: the golden tests check the roundings). It also checks weights.bin is at most 0.55x the fp32 build's
// (the weights stay f16). It also builds each original fp32 model with
// -precision fp16 (conv/GEMM weights stored f16, widened at New) and checks
// its weights.bin the same way and its output against the model's
// reference output with the same tolerances. With CUVIL_FP16_AB=N it times each fp16 build
// against the fp32 build of the original at 1 thread, N alternating
// rounds, by the harness processes' CPU time (getrusage; per-run time as
// the difference of a process of 11 runs and one of 1), and logs the
// ratios. CUVIL_FP16_RESNET50=1 adds resnet50_op13 from
// ~/.cache/cuvil-models.
func TestFP16Models(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles ten models (-short)")
	}
	shared, _ := filepath.Abs("../shared")
	if _, err := os.Stat(filepath.Join(shared, "models", "INDEX.md")); err != nil {
		t.Skipf("no ../shared models here (%v): the fp16 models are converted from them", err)
	}
	bench := filepath.Join(shared, "tools/ort/bench.sh")
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("no node on PATH (%v): ONNX Runtime runs through its Node.js binding", err)
	}
	ortDir := os.Getenv("ORT_DIR")
	if ortDir == "" {
		home, _ := os.UserHomeDir()
		ortDir = filepath.Join(home, ".cache/cuvil-ort")
	}
	if _, err := os.Stat(filepath.Join(ortDir, "node_modules/onnxruntime-node")); err != nil {
		t.Skipf("ONNX Runtime is not installed (%v): run ../shared/tools/ort/setup.sh", err)
	}
	type model struct{ name, dir string }
	var models []model
	for _, n := range []string{"mnist_cnn_op13", "squeezenet1_1_op13", "mobilenet_v2_op13", "light_inception_v2", "light_densenet121"} {
		models = append(models, model{n, filepath.Join(shared, "models", n)})
	}
	if os.Getenv("CUVIL_FP16_RESNET50") != "" {
		home, _ := os.UserHomeDir()
		models = append(models, model{"resnet50_op13", filepath.Join(home, ".cache/cuvil-models/resnet50_op13")})
	}
	h, err := harness.New()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	tmp := t.TempDir()
	type job struct {
		model  string
		input  string   // which input: ref (test_data_set_0) or random
		inputs []string // .cuvt files
		ort    []string // ORT's output_K.pb files
	}
	var jobs, precJobs []job // fp16 models vs ORT; -precision fp16 vs the fp32 reference
	var names []string
	for _, md := range models {
		m32, err := onnx.Load(filepath.Join(md.dir, "model.onnx"))
		if err != nil {
			t.Fatal(err)
		}
		if err := halfmodel.Convert(m32); err != nil {
			t.Fatalf("%s: %v", md.name, err)
		}
		b, err := onnx.Encode(m32)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(tmp, md.name)
		half := filepath.Join(dir, "model_fp16.onnx")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(half, b, 0o644); err != nil {
			t.Fatal(err)
		}
		sizes := map[string]int{}
		for _, b := range []struct{ key, path, prec string }{{md.name + "/fp32", filepath.Join(md.dir, "model.onnx"), ""}, {md.name + "/fp16", half, ""}, {md.name + "/prec-fp16", filepath.Join(md.dir, "model.onnx"), "fp16"}} {
			m, _, err := Load(Options{Model: b.path, Precision: b.prec})
			if err != nil {
				t.Fatalf("%s: %v", b.key, err)
			}
			files, err := gen.Generate(m, gen.Options{Package: "x", NoTest: true})
			if err != nil {
				t.Fatalf("%s: %v", b.key, err)
			}
			sizes[b.key] = len(files["weights.bin"])
			if err := h.Add(b.key, m); err != nil {
				t.Fatalf("%s: %v", b.key, err)
			}
		}
		r := float64(sizes[md.name+"/fp16"]) / float64(sizes[md.name+"/fp32"])
		rp := float64(sizes[md.name+"/prec-fp16"]) / float64(sizes[md.name+"/fp32"])
		t.Logf("%s: weights.bin fp32 %d bytes, fp16 model %d bytes (%.3fx), fp32 model -precision fp16 %d bytes (%.3fx)", md.name, sizes[md.name+"/fp32"], sizes[md.name+"/fp16"], r, sizes[md.name+"/prec-fp16"], rp)
		if r > 0.55 || rp > 0.55 {
			t.Errorf("%s: weights.bin of the fp16 model %.3fx, of -precision fp16 %.3fx the fp32 build's, want about half (<= 0.55)", md.name, r, rp)
		}
		// -precision fp16 on the original: its reference output.
		{
			j := job{model: md.name + "/prec-fp16", input: "ref"}
			for k := range m32.Graph.Inputs {
				in, err := onnx.ReadDataFile(filepath.Join(md.dir, "test_data_set_0", fmt.Sprintf("input_%d.pb", k)), ir.TensorKind)
				if err != nil {
					t.Fatal(err)
				}
				p := filepath.Join(dir, fmt.Sprintf("prec_input_%d.cuvt", k))
				if err := harness.WriteDataFile(p, in, ir.F32); err != nil {
					t.Fatal(err)
				}
				j.inputs = append(j.inputs, p)
			}
			for k := range m32.Graph.Outputs {
				j.ort = append(j.ort, filepath.Join(md.dir, "test_data_set_0", fmt.Sprintf("output_%d.pb", k)))
			}
			precJobs = append(precJobs, j)
		}
		// ORT on the fp16 model: the reference input, then a seeded random one.
		for i, src := range []string{"ref", "random"} {
			out := filepath.Join(dir, "ort_"+src)
			args := []string{half, "1", "0", "--outdir", out, "--quiet"}
			if src == "ref" {
				args = append(args, "--inputs", filepath.Join(md.dir, "test_data_set_0"))
			} else {
				args = append(args, "--seed", strconv.Itoa(16+i), "--save-inputs", filepath.Join(dir, "in_random"))
			}
			if o, err := exec.Command(bench, args...).CombinedOutput(); err != nil {
				t.Fatalf("%s: ORT: %v\n%s", md.name, err, o)
			}
			inDir := filepath.Join(md.dir, "test_data_set_0")
			if src == "random" {
				inDir = filepath.Join(dir, "in_random")
			}
			j := job{model: md.name + "/fp16", input: src}
			for k := range m32.Graph.Inputs {
				in, err := onnx.ReadDataFile(filepath.Join(inDir, fmt.Sprintf("input_%d.pb", k)), ir.TensorKind)
				if err != nil {
					t.Fatal(err)
				}
				p := filepath.Join(dir, fmt.Sprintf("%s_input_%d.cuvt", src, k))
				if err := harness.WriteDataFile(p, in, ir.F32); err != nil {
					t.Fatal(err)
				}
				j.inputs = append(j.inputs, p)
			}
			for k := range m32.Graph.Outputs {
				j.ort = append(j.ort, filepath.Join(out, fmt.Sprintf("output_%d.pb", k)))
			}
			jobs = append(jobs, j)
		}
		names = append(names, md.name)
	}
	exe, err := h.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Failed) > 0 {
		t.Fatalf("build failures: %v", h.Failed)
	}
	nHalf := len(jobs)
	jobs = append(jobs, precJobs...)
	var hjobs []harness.Job
	for i, j := range jobs {
		out := filepath.Join(tmp, fmt.Sprintf("out%d", i))
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		hjobs = append(hjobs, harness.Job{Model: j.model, Inputs: j.inputs, Out: out})
	}
	res, err := h.Run(context.Background(), exe, hjobs, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != "" {
			t.Fatalf("%s: %s", jobs[i].model, r.Err)
		}
		for k, ref := range jobs[i].ort {
			want, err := onnx.ReadTensorFile(ref)
			if err != nil {
				t.Fatal(err)
			}
			d, _, err := harness.ReadDataFile(filepath.Join(hjobs[i].Out, fmt.Sprintf("output_%d.cuvt", k)))
			if err != nil {
				t.Fatal(err)
			}
			w, g := want.Float64s(), d.Tensor.Float64s()
			if len(w) != len(g) {
				t.Fatalf("%s output %d: %d elements, ORT %d", jobs[i].model, k, len(g), len(w))
			}
			maxAbs, rel := compareLogits([][]float64{w}, [][]float64{g})
			refMax := 0.0
			for _, v := range w {
				refMax = math.Max(refMax, math.Abs(v))
			}
			if math.IsNaN(rel) { // an all-zero reference
				rel = maxAbs
			}
			what := "ORT on the same fp16 model"
			if i >= nHalf {
				what = "the fp32 model's reference output"
			}
			t.Logf("%s input %s output %d vs %s: max abs %.3g (max |ref| %.3g), relative L2 %.3g", jobs[i].model, jobs[i].input, k, what, maxAbs, refMax, rel)
			if maxAbs > 1e-2*math.Max(1, refMax) || rel > 1e-2 {
				t.Errorf("%s input %s output %d: max abs %.3g (bound %.3g), relative L2 %.3g (bound 1e-2)", jobs[i].model, jobs[i].input, k, maxAbs, 1e-2*math.Max(1, refMax), rel)
			}
		}
	}

	rounds, _ := strconv.Atoi(os.Getenv("CUVIL_FP16_AB"))
	if rounds <= 0 {
		return
	}
	const lo, hi = 1, 11
	out := filepath.Join(tmp, "out-ab")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	cpuOf := func(key string, inputs []string, runs int) float64 {
		var before, after syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
		res, err := h.Run(context.Background(), exe, []harness.Job{{Model: key, Inputs: inputs, Out: out, Runs: runs}}, 1)
		if err != nil || res[0].Err != "" {
			t.Fatalf("%s: %v %v", key, err, res)
		}
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after)
		tv := func(u syscall.Rusage) float64 { return float64(u.Utime.Nano()+u.Stime.Nano()) / 1e6 }
		return tv(after) - tv(before)
	}
	med := func(v []float64) float64 {
		v = append([]float64(nil), v...)
		sort.Float64s(v)
		return v[len(v)/2]
	}
	var table []string
	for mi, name := range names {
		inputs := jobs[2*mi].inputs // the reference input
		cpu := map[string][]float64{}
		for r := 0; r < rounds; r++ {
			for _, b := range []string{"fp32", "fp16"} {
				key := name + "/" + b
				c0 := cpuOf(key, inputs, lo)
				c1 := cpuOf(key, inputs, hi)
				cpu[b] = append(cpu[b], (c1-c0)/(hi-lo))
			}
		}
		ratio := med(cpu["fp16"]) / med(cpu["fp32"])
		var ratios []string
		for r := range cpu["fp16"] {
			ratios = append(ratios, fmt.Sprintf("%.3f", cpu["fp16"][r]/cpu["fp32"][r]))
		}
		table = append(table, fmt.Sprintf("%s: CPU ms/run at 1 thread fp32 %.3f, fp16 model %.3f; fp16/fp32 %.3f (per round %s)",
			name, med(cpu["fp32"]), med(cpu["fp16"]), ratio, strings.Join(ratios, " ")))
	}
	for _, l := range table {
		t.Log(l)
	}
}
