//go:build arm64 && linux && !purego

package templates

import (
	"encoding/binary"
	"os"
)

// cpuArm64HWCaps reads AT_HWCAP (16) and AT_HWCAP2 (26) from the auxiliary
// vector, /proc/self/auxv: pairs of 64-bit little-endian words (type,
// value) ending at AT_NULL. When the file cannot be read (a sandbox), it
// reports ASIMD only, which every arm64 Linux Go runs on has; known is
// false then.
func cpuArm64HWCaps() (hwcap, hwcap2 uint64, known bool) {
	b, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return hwcapASIMD, 0, false
	}
	return cpuParseAuxv(b)
}

// cpuParseAuxv extracts AT_HWCAP and AT_HWCAP2 from an auxv image.
func cpuParseAuxv(b []byte) (hwcap, hwcap2 uint64, known bool) {
	const atNull, atHWCap, atHWCap2 = 0, 16, 26
	for ; len(b) >= 16; b = b[16:] {
		tag, val := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
		switch tag {
		case atNull:
			return hwcap, hwcap2, known
		case atHWCap:
			hwcap, known = val, true
		case atHWCap2:
			hwcap2 = val
		}
	}
	return hwcap, hwcap2, known
}
