//go:build amd64 && !purego

package templates

import "testing"

// TestMaxPoolAVX2 runs the max-pooling tests on the AVX2 kernels where the
// CPU would pick the AVX-512 ones.
func TestMaxPoolAVX2(t *testing.T) {
	if !cpuHasAVX2FMA {
		t.Skip("no AVX2")
	}
	defer func(w bool) { poolWide = w }(poolWide)
	poolWide = false
	checkMaxPoolKernels(t)
	checkMaxPoolWide(t)
}
