//go:build amd64 && !purego

package templates

import "testing"

// TestNHWCTapsAVX2 runs the window kernels' comparison with AVX-512 off, so
// the AVX2 kernels take every channel block on a machine that has AVX-512.
func TestNHWCTapsAVX2(t *testing.T) {
	if !cpuHasAVX512 {
		t.Skip("no AVX-512: TestNHWCTaps already runs the AVX2 kernels")
	}
	cpuHasAVX512 = false
	defer func() { cpuHasAVX512 = true }()
	nhwcTapsCompare(t)
}
