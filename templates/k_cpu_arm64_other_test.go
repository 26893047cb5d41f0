//go:build arm64 && !linux && !purego

package templates

func cpuParseAuxvForTest([]byte) (uint64, uint64, bool) { return 0, 0, false }
