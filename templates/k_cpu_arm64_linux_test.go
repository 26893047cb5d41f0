//go:build arm64 && linux && !purego

package templates

var cpuParseAuxvForTest = cpuParseAuxv
