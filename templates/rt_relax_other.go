//go:build !amd64 || purego

package templates

// cpuRelax is the pause between two polls of a spin-wait (rt_relax_amd64.s
// on amd64: PAUSE); elsewhere it returns at once.
func cpuRelax() {}
