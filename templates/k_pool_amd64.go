//go:build amd64 && !purego

package templates

// The max-pooling kernels' dispatch: AVX-512 (16 lanes) or AVX2 (8 lanes)
// assembly (asm_pool_amd64.s) when the CPU has it. A length that is not a
// multiple of the vector runs one more vector over the last lanes,
// overlapping the previous one: every output is a maximum of its own inputs
// (dst aliasing r0 included: max(max(a, b), b) is max(a, b)), so computing
// it twice changes nothing. The assembly reads and writes through raw
// pointers, so each wrapper checks the bounds it touches first.

// poolWide makes the kernels use AVX-512 (tests turn it off to reach the
// AVX2 ones).
var poolWide = cpuHasAVX512

// poolLanes is the vector width for n outputs: 16, 8, or 0 (no assembly,
// or fewer outputs than one vector).
func poolLanes(n int) int {
	switch {
	case poolWide && n >= 16:
		return 16
	case cpuHasAVX2FMA && n >= 8:
		return 8
	}
	return 0
}

// maxRows sets dst[i] = max(r0[i], r1[i], r2[i]) (NaN if any is); the rows
// must be at least as long as dst, and dst may be r0.
func maxRows(dst, r0, r1, r2 []float32) {
	n := len(dst)
	lanes := poolLanes(n)
	if lanes == 0 {
		maxRowsGo(dst, r0, r1, r2)
		return
	}
	_, _, _ = r0[n-1], r1[n-1], r2[n-1]
	kernel := maxPoolRowsAVX2
	if lanes == 16 {
		kernel = maxPoolRowsAVX512
	}
	nv := n &^ (lanes - 1)
	kernel(&dst[0], &r0[0], &r1[0], &r2[0], nv)
	if o := n - lanes; nv < n {
		kernel(&dst[o], &r0[o], &r1[o], &r2[o], lanes)
	}
}

// maxCols sets y[o] = max(x[s*o+kw] for kw in [0, k)) (NaN if any tap is)
// for the first outputs of y, s 1 or 2, and returns how many it did: all,
// or none without assembly or when y is shorter than a vector. x must hold
// every tap; with s = 2 the kernel reads one element past the last, so the
// last output is left to the caller when x ends at its last tap.
func maxCols(y, x []float32, k, s int) int {
	n := len(y)
	if s == 2 && 2*n+k-1 > len(x) {
		n--
	}
	lanes := poolLanes(n)
	if lanes == 0 || k < 1 || s < 1 || s > 2 {
		return 0
	}
	_ = x[s*(n-1)+k-1+s-1] // the last element read
	kernel := maxPoolColsAVX2
	if lanes == 16 {
		kernel = maxPoolColsAVX512
	}
	nv := n &^ (lanes - 1)
	kernel(&y[0], &x[0], nv, k, s)
	if o := n - lanes; nv < n {
		kernel(&y[o], &x[s*o], lanes, k, s)
	}
	return n
}
