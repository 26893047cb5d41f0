package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cuvil/cuvil/asmgen/internal/genfresh"
)

// TestGeneratedUpToDate: the committed templates/asm_bf16_amd64.{s,go} are
// what this generator writes (a change to it must come with its go generate).
func TestGeneratedUpToDate(t *testing.T) { genfresh.Check(t, "asm_bf16_amd64") }

// TestEVEXAgainstGNUAs: evexDPBF16PS's and evexCVTNEPS2BF16's bytes are GNU as's for every
// register class the tiles use (low and high banks, each operand).
func TestEVEXAgainstGNUAs(t *testing.T) {
	as, err := exec.LookPath("as")
	if err != nil {
		t.Skip("no GNU as")
	}
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		t.Skip("no objdump")
	}
	var src bytes.Buffer
	var want [][6]byte
	for _, c := range [][3]int{{0, 24, 28}, {23, 27, 31}, {17, 9, 3}, {7, 15, 8}, {16, 1, 30}, {5, 25, 19}} {
		fmt.Fprintf(&src, "vdpbf16ps %%zmm%d, %%zmm%d, %%zmm%d\n", c[2], c[1], c[0])
		want = append(want, evexDPBF16PS(c[0], c[1], c[2]))
	}
	// VCVTNEPS2BF16 ymm(dst), zmm(src): the pair the converter uses and
	// the other banks.
	for _, c := range [][2]int{{1, 0}, {0, 1}, {9, 17}, {23, 8}, {31, 30}, {4, 12}} {
		fmt.Fprintf(&src, "vcvtneps2bf16 %%zmm%d, %%ymm%d\n", c[1], c[0])
		want = append(want, evexCVTNEPS2BF16(c[0], c[1]))
	}
	dir := t.TempDir()
	s, o := filepath.Join(dir, "t.s"), filepath.Join(dir, "t.o")
	if err := os.WriteFile(s, src.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(as, "-o", o, s).CombinedOutput(); err != nil {
		t.Skipf("as does not know vdpbf16ps: %v %s", err, out)
	}
	out, err := exec.Command(objdump, "-d", o).Output()
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		hex := fmt.Sprintf("%02x %02x %02x %02x %02x %02x", w[0], w[1], w[2], w[3], w[4], w[5])
		if !bytes.Contains(out, []byte(hex)) {
			t.Errorf("case %d: %s not in GNU as's output:\n%s", i, hex, out)
		}
	}
}
