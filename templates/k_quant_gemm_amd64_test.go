//go:build amd64 && !purego

package templates

import (
	"math/rand"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestQGemmVNNITiles: every VNNI tile gives qgemmTileGo's sums, on
// extreme bytes (255 x -128 in every lane) and random ones.
func TestQGemmVNNITiles(t *testing.T) {
	if !cpuHasVNNI {
		t.Skip("no AVX512-VNNI")
	}
	rng := rand.New(rand.NewSource(5))
	for _, k4 := range []int{1, 2, 7, 33} {
		for rows := 1; rows <= qgemmMR; rows++ {
			for panels := 1; panels <= qgemmTW/qgemmNR; panels++ {
				lda := k4*4 + 4*rng.Intn(3)
				bstride := k4*64 + 64*rng.Intn(2)
				a := make([]uint8, (rows-1)*lda+k4*4)
				b := make([]int8, (panels-1)*bstride+k4*64)
				ext := rng.Intn(2) == 0
				for i := range a {
					a[i] = uint8(rng.Intn(256))
					if ext {
						a[i] = 255
					}
				}
				for i := range b {
					b[i] = int8(rng.Intn(256) - 128)
					if ext {
						b[i] = -128
					}
				}
				var got, want [qgemmMR * qgemmTW]int32
				for i := range got {
					got[i], want[i] = -7, -7 // untouched outside the tile
				}
				qgemmTile(a, lda, rows, b, bstride, panels, k4, &got)
				qgemmTileGo(a, lda, rows, b, bstride, panels, k4, &want)
				if got != want {
					t.Fatalf("k4 %d, %dx%d: VNNI tile differs from the Go one", k4, rows, panels*16)
				}
			}
		}
	}
}

// TestQGemmVNNIDispatch: on a CPU whose kernel reports avx512_vnni (with
// avx512f, /proc/cpuinfo), qgemmTile takes the VNNI tiles, not the Go
// fallback: a CPUID probe that misread the bit would silently make every
// int8 build several times slower (the skip above would hide it).
func TestQGemmVNNIDispatch(t *testing.T) {
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skip("no /proc/cpuinfo")
	}
	var flags []string
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			flags = strings.Fields(v)
			break
		}
	}
	has := func(f string) bool { return slices.Contains(flags, f) }
	if !has("avx512f") || !has("avx512_vnni") {
		if cpuHasVNNI {
			t.Fatalf("cpuHasVNNI is true but /proc/cpuinfo lists no avx512f+avx512_vnni")
		}
		t.Skip("the CPU reports no avx512_vnni")
	}
	if !cpuHasAVX512 || !cpuHasVNNI {
		t.Fatalf("/proc/cpuinfo reports avx512f and avx512_vnni, but cpuHasAVX512 = %v, cpuHasVNNI = %v: qgemmTile falls back to Go", cpuHasAVX512, cpuHasVNNI)
	}
}

// TestQGemmVNNIRule: the dispatch rule on the CPUID bits of known CPUs,
// then on this CPU's own bits: Zen 4 (AVX512-VNNI, no AVX-VNNI) takes the
// AVX-512 VNNI tiles; AVX-VNNI alone (Alder Lake, no AVX-512) or
// AVX-512 without VNNI (Skylake-X) falls back to Go.
func TestQGemmVNNIRule(t *testing.T) {
	for _, c := range []struct {
		name   string
		avx512 bool
		ecx7   uint32
		want   bool
	}{
		{"zen4", true, cpuidAVX512VNNI, true},
		{"cascade lake", true, cpuidAVX512VNNI | 1<<1, true},
		{"skylake-x", true, 1 << 1, false},
		{"alder lake (avx-vnni only)", false, 0, false},
		{"avx512-vnni bit, avx-512 state not saved", false, cpuidAVX512VNNI, false},
	} {
		if got := qgemmUseVNNI(c.avx512, c.ecx7); got != c.want {
			t.Errorf("%s: qgemmUseVNNI = %v, want %v", c.name, got, c.want)
		}
	}
	_, _, ecx7, _ := cpuidAsm(7, 0)
	eax71, _, _, _ := cpuidAsm(7, 1)
	t.Logf("CPUID 7.0 ECX avx512_vnni=%v, 7.1 EAX avx_vnni=%v, avx512 usable=%v: VNNI tiles %v",
		ecx7&cpuidAVX512VNNI != 0, eax71&cpuidAVXVNNI != 0, cpuHasAVX512, cpuHasVNNI)
	if cpuHasVNNI != qgemmUseVNNI(cpuHasAVX512, ecx7) {
		t.Fatalf("cpuHasVNNI = %v, the rule on this CPU's bits says %v", cpuHasVNNI, !cpuHasVNNI)
	}
	if cpuHasAVX512 && ecx7&cpuidAVX512VNNI != 0 && eax71&cpuidAVXVNNI == 0 && !cpuHasVNNI {
		t.Fatal("a Zen 4-like CPU (AVX512-VNNI without AVX-VNNI) does not take the VNNI tiles")
	}
}
