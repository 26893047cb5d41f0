package gen

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
