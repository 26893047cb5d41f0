//go:build amd64 && !purego

package templates

import "testing"

// TestWinogradNHWCAVX2 runs the NHWC Winograd checks with AVX-512 off, so
// the AVX2 transforms take every channel block on a machine that has
// AVX-512.
func TestWinogradNHWCAVX2(t *testing.T) {
	if !cpuHasAVX512 {
		t.Skip("no AVX-512: the other tests already run the AVX2 kernels")
	}
	cpuHasAVX512 = false
	defer func() { cpuHasAVX512 = true }()
	wnTransformsCompare(t)
	wnCompare(t)
}
