//go:build amd64 && !purego

package templates

// The int8 GEMM tiles (asm_q8_amd64.s, from asmgen/amd64/q8): AVX512-VNNI
// (VPDPBUSD) where the CPU has it, else AVX2 (VPMADDWD on B widened to
// s16, exact for every B, or VPMADDUBSW where B's k pairs fit s16:
// qgemmPairsFit), else the pure-Go tile. AVX-VNNI (VEX VPDPBUSD) tiles
// are not written yet.

// cpuHasVNNI reports AVX512-VNNI (CPUID 7.0 ECX bit 11) on top of AVX-512.
var cpuHasVNNI = detectVNNI()

func detectVNNI() bool {
	_, _, ecx7, _ := cpuidAsm(7, 0)
	return qgemmUseVNNI(cpuHasAVX512, ecx7)
}

// qgemmUseVNNI is the tiles' dispatch rule from the CPUID bits: the
// AVX-512 VNNI tiles need usable AVX-512 (cpuHasAVX512) and AVX512-VNNI,
// CPUID leaf 7.0 ECX bit 11. AVX-VNNI (the VEX form, leaf 7.1 EAX bit 4)
// is neither needed nor enough: AMD Zen 4 has AVX512-VNNI without it,
// Intel Alder Lake AVX-VNNI without AVX-512.
func qgemmUseVNNI(avx512 bool, ecx7 uint32) bool {
	return avx512 && ecx7&cpuidAVX512VNNI != 0
}

// cpuidAVX512VNNI and cpuidAVXVNNI are the feature bits: CPUID 7.0 ECX
// and CPUID 7.1 EAX.
const cpuidAVX512VNNI, cpuidAVXVNNI = 1 << 11, 1 << 4

// qgemmKind is which tiles qgemmTile runs.
type qgemmKind int

const (
	qgemmKindGo   qgemmKind = iota // qgemmTileGo
	qgemmKindAVX2                  // qgemmAVX2W / qgemmAVX2B (one panel a call)
	qgemmKindVNNI                  // qgemmVNNI
)

func (k qgemmKind) String() string {
	return [...]string{"go", "avx2", "avx512-vnni"}[k]
}

// qgemmKindFor is the dispatch rule: the VNNI tiles when qgemmUseVNNI,
// the AVX2 ones with AVX2 (cpuHasAVX2FMA: AVX2 and the OS saving YMM
// state; the tiles use no FMA, but no CPU has AVX2 without it), else Go.
func qgemmKindFor(avx2, avx512 bool, ecx7 uint32) qgemmKind {
	switch {
	case qgemmUseVNNI(avx512, ecx7):
		return qgemmKindVNNI
	case avx2:
		return qgemmKindAVX2
	}
	return qgemmKindGo
}

// qgemmTiles is this CPU's kind, read once.
var qgemmTiles = detectQGemmKind()

func detectQGemmKind() qgemmKind {
	_, _, ecx7, _ := cpuidAsm(7, 0)
	return qgemmKindFor(cpuHasAVX2FMA, cpuHasAVX512, ecx7)
}

// qgemmVNNI holds the tiles by [rows-1][panels-1].
var qgemmVNNI = [qgemmMR][qgemmTW / qgemmNR]func(k4 int, a *uint8, lda int, b *int8, bstride int, acc *int32){
	{qgemmVNNI1x16, qgemmVNNI1x32, qgemmVNNI1x48, qgemmVNNI1x64},
	{qgemmVNNI2x16, qgemmVNNI2x32, qgemmVNNI2x48, qgemmVNNI2x64},
	{qgemmVNNI3x16, qgemmVNNI3x32, qgemmVNNI3x48, qgemmVNNI3x64},
	{qgemmVNNI4x16, qgemmVNNI4x32, qgemmVNNI4x48, qgemmVNNI4x64},
	{qgemmVNNI5x16, qgemmVNNI5x32, qgemmVNNI5x48, qgemmVNNI5x64},
	{qgemmVNNI6x16, qgemmVNNI6x32, qgemmVNNI6x48, qgemmVNNI6x64},
}

// qgemmAVX2Tile is an AVX2 tile: rows (its index + 1) x one panel.
type qgemmAVX2Tile = func(k4 int, a *uint8, lda int, b *int8, acc *int32)

// qgemmAVX2W are the exact AVX2 tiles by rows-1, qgemmAVX2B the byte ones
// (for panels whose pairs fit).
var (
	qgemmAVX2W = []qgemmAVX2Tile{qgemmAVX2W1x16, qgemmAVX2W2x16}
	qgemmAVX2B = []qgemmAVX2Tile{qgemmAVX2B1x16, qgemmAVX2B2x16, qgemmAVX2B3x16, qgemmAVX2B4x16}
)

// qgemmTile runs the tile of rows x 16*panels (qgemmTileGo's contract);
// fit is B's pairsFit.
func qgemmTile(a []uint8, lda, rows int, b []int8, bstride, panels, k4 int, fit bool, acc *[qgemmMR * qgemmTW]int32) {
	if qgemmTiles == qgemmKindGo || k4 == 0 {
		qgemmTileGo(a, lda, rows, b, bstride, panels, k4, acc)
		return
	}
	_ = a[(rows-1)*lda+k4*4-1]
	_ = b[(panels-1)*bstride+k4*64-1]
	if qgemmTiles == qgemmKindVNNI {
		qgemmVNNI[rows-1][panels-1](k4, &a[0], lda, &b[0], bstride, &acc[0])
		return
	}
	tiles := qgemmAVX2W
	if fit {
		tiles = qgemmAVX2B
	}
	// rows in the fewest groups of at most len(tiles), balanced (6 rows
	// with 4-row tiles: 3+3; with 2-row tiles 2+2+2).
	groups := (rows + len(tiles) - 1) / len(tiles)
	for p := 0; p < panels; p++ {
		pb := &b[p*bstride]
		for g, r0 := 0, 0; g < groups; g++ {
			rr := (rows - r0) / (groups - g)
			tiles[rr-1](k4, &a[r0*lda], lda, pb, &acc[r0*qgemmTW+p*qgemmNR])
			r0 += rr
		}
	}
}

// qgemmEpiF32Vec stores storeRow's float32 outputs y[j] for j below the
// largest multiple of 8 <= len(acc) with the AVX2 epilogue and returns
// that count (0 without AVX2); the caller checked qgemmEpi.vecF32.
func qgemmEpiF32Vec(acc, ct []int32, mu []float32, lo, hi float32, y []float32) int {
	n := len(acc) &^ 7
	if !cpuHasAVX2FMA || n == 0 {
		return 0
	}
	_, _, _ = ct[n-1], mu[n-1], y[n-1]
	qgemmEpiF32AVX2(n, &acc[0], &ct[0], &mu[0], lo, hi, &y[0])
	return n
}

// qgemmEpiU8Vec is qgemmEpiF32Vec for the u8 requantisation (qgemmEpi.vecU8).
func qgemmEpiU8Vec(acc, ct []int32, mu []float64, zy, lo, hi float64, y []uint8) int {
	n := len(acc) &^ 7
	if !cpuHasAVX2FMA || n == 0 {
		return 0
	}
	_, _, _ = ct[n-1], mu[n-1], y[n-1]
	qgemmEpiU8AVX2(n, &acc[0], &ct[0], &mu[0], zy, lo, hi, &y[0])
	return n
}
