package passes

import "testing"

func TestParseWinograd(t *testing.T) {
	for s, want := range map[string]WinogradMode{"": WinogradAuto, "auto": WinogradAuto, "on": WinogradOn, "true": WinogradOn, "off": WinogradOff, "false": WinogradOff} {
		if m, err := ParseWinograd(s); err != nil || m != want {
			t.Errorf("ParseWinograd(%q) = %v, %v; want %v", s, m, err, want)
		}
	}
	if _, err := ParseWinograd("sometimes"); err == nil {
		t.Error("ParseWinograd accepted sometimes")
	}
}

// TestWinogradUsefulNHWC pins the NHWC rule: Winograd from 8 input
// channels, but not on maps of at most 8x8 with C*M >= 128K (resnet50's
// 512x7 convs run im2col+GEMM).
func TestWinogradUsefulNHWC(t *testing.T) {
	for _, c := range []struct {
		M, C, H, W int
		want       bool
	}{
		{512, 512, 7, 7, false}, {256, 512, 7, 7, false}, {512, 512, 9, 9, true},
		{256, 256, 14, 14, true}, {256, 256, 7, 7, true}, {64, 64, 7, 7, true},
		{32, 4, 56, 56, false}, {64, 64, 56, 56, true},
	} {
		if got := winogradUsefulNHWC(c.M, c.C, c.H, c.W); got != c.want {
			t.Errorf("winogradUsefulNHWC(M=%d, C=%d, %dx%d) = %v, want %v", c.M, c.C, c.H, c.W, got, c.want)
		}
	}
}

// TestWinogradF4Accurate pins the accuracy rules: NHWC F(4x4) on maps up
// to 32x32, or 64x64 with at most 16 channels in (not inception_v3's
// 35x35 96-channel layers, yolov5n_like's 32-channel 40x40 ones or any
// 73x73 and 147x147 stem map); NCHW on maps
// up to 32x32, and up to 64x64 from 64 input channels (not yolov5n_like's
// 32-channel 40x40 ones).
func TestWinogradF4Accurate(t *testing.T) {
	for _, c := range []struct {
		C, H, W int
		want    bool
	}{{64, 56, 56, false}, {16, 56, 56, true}, {16, 64, 64, true}, {96, 35, 35, false}, {32, 40, 40, false},
		{256, 32, 32, true}, {512, 7, 7, true}, {16, 73, 73, false}, {8, 147, 147, false}, {16, 65, 64, false}} {
		if got := winogradF4AccurateNHWC(c.C, c.H, c.W); got != c.want {
			t.Errorf("winogradF4AccurateNHWC(C=%d, %dx%d) = %v, want %v", c.C, c.H, c.W, got, c.want)
		}
	}
	for _, c := range []struct {
		C, H, W int
		want    bool
	}{
		{16, 28, 28, true}, {8, 32, 32, true}, {64, 56, 56, true}, {64, 64, 64, true},
		{32, 40, 40, false}, {16, 80, 80, false}, {512, 65, 64, false},
	} {
		if got := winogradF4Accurate(c.C, c.H, c.W); got != c.want {
			t.Errorf("winogradF4Accurate(C=%d, %dx%d) = %v, want %v", c.C, c.H, c.W, got, c.want)
		}
	}
}
