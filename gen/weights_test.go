package gen

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
)

// TestPackWeightsAligned: every constant starts at a multiple of 64 bytes
// and the blob holds each one's bytes there; the checksum is CRC-32C.
func TestPackWeightsAligned(t *testing.T) {
	m := tinyModel()
	c, err := lower(m, mustLibrary(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	blob, entries, err := packWeights(c.constTensors)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Fatalf("%d constants, want 3", len(entries))
	}
	for i, e := range entries {
		if e.off%weightAlign != 0 {
			t.Errorf("%s at %d, not a multiple of %d", e.name, e.off, weightAlign)
		}
		if !bytes.Equal(blob[e.off:e.off+e.size], c.constTensors[i].Raw) {
			t.Errorf("%s: the blob does not hold its bytes at %d", e.name, e.off)
		}
	}
	if len(blob) != minEmbedSize {
		t.Errorf("weights.bin of %d bytes, want it padded to %d", len(blob), minEmbedSize)
	}
	if blob, _, err := packWeights(nil); err != nil || len(blob) != 0 {
		t.Errorf("no constants: %d bytes, %v; want an empty weights.bin", len(blob), err)
	}
	if weightsSum(nil) != 0 || weightsSum([]byte("123456789")) != 0xe3069283 {
		t.Errorf("weightsSum is not CRC-32C: %08x", weightsSum([]byte("123456789")))
	}
}

func mustLibrary(t *testing.T) *library {
	t.Helper()
	lib, err := loadLibrary()
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

// TestWeightsModeFiles: embed (the default) embeds weights.bin as a
// string; file leaves it out, adds weights.go and its mapped/read pair,
// NewFromFile and NewFromReader, and compiles the size and checksum in;
// an unknown mode is refused.
func TestWeightsModeFiles(t *testing.T) {
	embed, err := Generate(tinyModel(), Options{Package: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	file, err := Generate(tinyModel(), Options{Package: "tiny", Weights: WeightsFile})
	if err != nil {
		t.Fatal(err)
	}
	sum := []byte("cuvilWeightsCRC  = 0x")
	for _, want := range [][]byte{[]byte("//go:embed weights.bin\nvar cuvilWeights string"), sum, []byte("func New() (*Model, error) {\n\treturn cuvilNewModel(cuvilWeights)")} {
		if !bytes.Contains(embed["model.go"], want) {
			t.Errorf("embed model.go lacks %q", want)
		}
	}
	for _, name := range []string{"weights.go", "weights_mmap.go", "weights_nommap.go"} {
		if _, ok := embed[name]; ok {
			t.Errorf("embed package has %s", name)
		}
		if _, ok := file[name]; !ok {
			t.Errorf("file package lacks %s", name)
		}
	}
	if !bytes.Equal(embed["weights.bin"], file["weights.bin"]) {
		t.Errorf("weights.bin differs between the modes")
	}
	src := file["model.go"]
	if bytes.Contains(src, []byte("go:embed")) || bytes.Contains(src, []byte(`_ "embed"`)) {
		t.Errorf("file model.go embeds")
	}
	for _, want := range []string{"func NewFromFile(path string) (*Model, error)", "func NewFromReader(r io.ReaderAt, size int64) (*Model, error)", "return nil, errCuvilNoEmbed", string(sum)} {
		if !bytes.Contains(src, []byte(want)) {
			t.Errorf("file model.go lacks %q", want)
		}
	}
	if !bytes.Contains(file["weights_mmap.go"], []byte("//go:build linux || darwin")) || !bytes.Contains(file["weights_nommap.go"], []byte("//go:build !linux && !darwin")) {
		t.Errorf("weights_mmap.go / weights_nommap.go lost their build constraints")
	}
	if !bytes.Contains(file["doc.go"], []byte("not embedded (-weights file)")) {
		t.Errorf("doc.go does not say the weights are not embedded")
	}
	defer func(n int64) { maxEmbedBytes = n }(maxEmbedBytes)
	maxEmbedBytes = 1000
	if _, err := Generate(tinyModel(), Options{Package: "tiny"}); err == nil || !strings.Contains(err.Error(), "compile with -weights file") {
		t.Errorf("weights past go:embed's limit: %v", err)
	}
	if _, err := Generate(tinyModel(), Options{Package: "tiny", Weights: WeightsFile}); err != nil {
		t.Errorf("weights past go:embed's limit, -weights file: %v", err)
	}
	if _, err := Generate(tinyModel(), Options{Package: "tiny", Weights: "mmap"}); err == nil || !strings.Contains(err.Error(), `weights mode "mmap"`) {
		t.Errorf("unknown mode: %v", err)
	}
}

// TestWeightsModesRun builds and tests the tiny model's package in both
// modes (TestWeightsInPlace in both; TestWeightsFile, with its truncated and
// corrupted copies, in file mode, once with the weights beside the package
// and once elsewhere), and vets both packages for a big-endian machine,
// for systems without mmap and with the purego tag.
func TestWeightsModesRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		move string // where the weights go, relative to the module root
	}{
		{"embed", Options{Package: "tiny"}, ""},
		{"file", Options{Package: "tiny", Weights: WeightsFile}, ""},
		{"file-elsewhere", Options{Package: "tiny", Weights: WeightsFile, WeightsTestPath: "../assets/tiny.bin"}, "assets/tiny.bin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, err := Generate(tinyModel(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if tc.move != "" {
				blob := files["weights.bin"]
				delete(files, "weights.bin")
				out := goTestWith(t, "tiny", files, func(root string) {
					p := filepath.Join(root, tc.move)
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, blob, 0o644); err != nil {
						t.Fatal(err)
					}
				})
				checkPassed(t, out, "TestWeightsInPlace", "TestWeightsFile", "TestRun")
				return
			}
			out := goTestWith(t, "tiny", files, func(root string) {
				for _, target := range [][]string{{"GOARCH=s390x"}, {"GOOS=windows"}, {"GOOS=plan9"}, {"GOFLAGS=-buildvcs=false -tags=purego"}} {
					cmd := exec.Command("go", "vet", "./...")
					cmd.Dir = root
					cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
					cmd.Env = append(cmd.Env, target...)
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Errorf("go vet with %v: %v\n%s", target, err, out)
					}
				}
			})
			want := []string{"TestWeightsInPlace", "TestRun"}
			if tc.opts.Weights == WeightsFile {
				want = append(want, "TestWeightsFile")
			}
			checkPassed(t, out, want...)
		})
	}
}

func checkPassed(t *testing.T, out string, tests ...string) {
	t.Helper()
	for _, test := range tests {
		if !strings.Contains(out, "--- PASS: "+test+" ") {
			t.Errorf("%s did not pass:\n%s", test, out)
		}
	}
}

// TestWeightsStoredHalf: f32 constants marked store=f16 (widen-half,
// -precision fp16) take 2 bytes an element in weights.bin, their table
// entries say stored: F16, the package copies WidenF16 and sets
// cuvilWidenF16, and the generated package's tests pass in both weights
// modes: its constants, widened at New, equal the f32 values (rounded to
// halves beforehand here, so the model's reference outputs stay exact).
func TestWeightsStoredHalf(t *testing.T) {
	mark := func() *ir.Model {
		m := tinyModel()
		for _, v := range m.Graph.Consts {
			c := v.Const
			if c.DType != ir.F32 {
				continue
			}
			raw := make([]byte, len(c.Raw))
			for i := 0; i+4 <= len(raw); i += 4 {
				f := ir.F16ToF32(ir.F32ToF16(math.Float32frombits(binary.LittleEndian.Uint32(c.Raw[i:]))))
				binary.LittleEndian.PutUint32(raw[i:], math.Float32bits(f))
			}
			v.Const = &ir.Tensor{Name: c.Name, DType: c.DType, Shape: c.Shape, Raw: raw, Store: ir.F16}
		}
		return m
	}
	m := mark()
	c, err := lower(m, mustLibrary(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, entries, err := packWeights(c.constTensors)
	if err != nil {
		t.Fatal(err)
	}
	halves := 0
	for i, e := range entries {
		if ct := c.constTensors[i]; ct.Store == ir.F16 {
			halves++
			if e.stored != ir.F16 || e.size != int64(len(ct.Raw)/2) {
				t.Errorf("%s: stored %v, %d bytes; want F16, %d", e.name, e.stored, e.size, len(ct.Raw)/2)
			}
		}
	}
	if halves == 0 {
		t.Fatal("tiny model has no f32 constant to store half")
	}
	for _, mode := range []string{WeightsEmbed, WeightsFile} {
		t.Run(mode, func(t *testing.T) {
			files, err := Generate(mark(), Options{Package: "tiny", Weights: mode})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(files["model.go"], []byte("stored: F16")) || !bytes.Contains(files["model.go"], []byte("cuvilWidenF16 = widenF16")) {
				t.Fatalf("model.go lacks the stored-f16 table entries or the widening hook:\n%s", files["model.go"])
			}
			if _, ok := files["k_half.go"]; !ok {
				t.Fatal("k_half.go not copied")
			}
			out := goTestWith(t, "tiny", files, nil)
			want := []string{"TestWeightsInPlace", "TestRun"}
			if mode == WeightsFile {
				want = append(want, "TestWeightsFile")
			}
			checkPassed(t, out, want...)
		})
	}
}
