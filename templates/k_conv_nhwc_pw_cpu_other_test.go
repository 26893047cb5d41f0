//go:build !linux

package templates

// threadCPUNanos is 0 (unknown) off Linux.
func threadCPUNanos() int64 { return 0 }
