//go:build !amd64 || purego

package templates

// actAsmImpls: without amd64 assembly, the dispatched rows are the only
// ones (the NEON kernels on arm64, the twins elsewhere).
func actAsmImpls() []actRows { return nil }
