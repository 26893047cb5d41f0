//go:build arm64 && !linux && !purego

package templates

import "runtime"

// cpuArm64HWCaps reports features in Linux hwcap bits: on darwin and ios
// ASIMD, DotProd and FP16 (every Apple core since the A11 has them; I8MM
// is M2 and later, so not assumed), elsewhere ASIMD only. known is true on
// darwin/ios, where the answer is certain.
func cpuArm64HWCaps() (hwcap, hwcap2 uint64, known bool) {
	switch runtime.GOOS {
	case "darwin", "ios":
		return hwcapASIMD | hwcapASIMDDP | hwcapASIMDHP, 0, true
	}
	return hwcapASIMD, 0, false
}
