package gen

import (
	"slices"
	"testing"
)

// TestClosureCopiesAssembly checks that a model using GEMM gets the
// assembly, both sides of each build-tag pair, and the pure-Go twins.
func TestClosureCopiesAssembly(t *testing.T) {
	lib, err := loadLibrary()
	if err != nil {
		t.Fatal(err)
	}
	files := lib.closure([]string{"Conv"})
	for _, want := range []string{"asm_cpu_amd64.go", "asm_sgemm.go", "asm_sgemm_amd64.go", "asm_sgemm_purego.go", "rt_gemm.go", "rt_pool.go", "k_conv.go"} {
		if !slices.Contains(files, want) {
			t.Errorf("closure of Conv lacks %s (has %v)", want, files)
		}
	}
	name, text, err := lib.assembly("asm_sgemm_amd64.go")
	if err != nil || name != "asm_sgemm_amd64.s" || len(text) == 0 {
		t.Errorf("assembly(asm_sgemm_amd64.go) = %q, %d bytes, %v; want asm_sgemm_amd64.s", name, len(text), err)
	}
}
