//go:build !linux

package templates

import "time"

// threadClockNanos stands in for the Linux thread CPU clock
// (k_conv_chain_bench_test.go) elsewhere: wall time in ns, enough for the
// A/B tests to compile and run on darwin and windows.
func threadClockNanos() int64 { return time.Now().UnixNano() }
