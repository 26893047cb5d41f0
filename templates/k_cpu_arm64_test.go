//go:build arm64 && !purego

package templates

import (
	"encoding/binary"
	"os"
	"runtime"
	"testing"
)

// TestCPUDispatchARM64 fails when dispatch fell back to Go where NEON is
// present: on Linux the auxiliary vector must be readable here and show
// ASIMD, on darwin the features are assumed, and sgemm must route to the
// NEON kernel.
func TestCPUDispatchARM64(t *testing.T) {
	t.Logf("hwcap %#x hwcap2 %#x known %v: ASIMD %v DotProd %v FP16 %v I8MM %v",
		cpuHWCap, cpuHWCap2, cpuHWCapKnown, cpuHasASIMD, cpuHasDotProd, cpuHasFP16, cpuHasI8MM)
	switch runtime.GOOS {
	case "linux", "android":
		if _, err := os.Stat("/proc/self/auxv"); err == nil && !cpuHWCapKnown {
			t.Errorf("/proc/self/auxv exists but AT_HWCAP was not read")
		}
	case "darwin", "ios":
		if !cpuHasDotProd || !cpuHasFP16 {
			t.Errorf("darwin: DotProd and FP16 must be assumed")
		}
	}
	if !cpuHasASIMD {
		t.Fatalf("no ASIMD detected")
	}
	if !sgemmUseAsm {
		t.Fatalf("sgemm fell back to Go although ASIMD is present")
	}
	// The NHWC convolutions (pointwise, im2col, conv chains, Winograd
	// GEMMs) take the NEON tiles, not the Go twin.
	if rows, panels := nhwcPWTileShape(); !nhwcPWFast || rows != nhwcPWNEONRows || panels != 1 {
		t.Fatalf("NHWC tiles: fast %v shape %dx%d panels, want the NEON tiles", nhwcPWFast, rows, panels)
	}
	// The Winograd transforms take the NEON kernels.
	if !wnNEON(2) || !wnNEON(4) {
		t.Fatalf("Winograd transforms fell back to Go although ASIMD is present: F(2x2) %v F(4x4) %v", wnNEON(2), wnNEON(4))
	}
}

// TestCPUParseAuxv: the auxv parser on a hand-made image.
func TestCPUParseAuxv(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux auxv")
	}
	var b []byte
	for _, p := range [][2]uint64{{6, 4096}, {16, hwcapASIMD | hwcapASIMDDP}, {26, hwcap2I8MM}, {0, 0}, {16, 0}} {
		b = binary.LittleEndian.AppendUint64(b, p[0])
		b = binary.LittleEndian.AppendUint64(b, p[1])
	}
	h, h2, ok := cpuParseAuxvForTest(b)
	if !ok || h != hwcapASIMD|hwcapASIMDDP || h2 != hwcap2I8MM {
		t.Fatalf("got %#x %#x %v", h, h2, ok)
	}
}
