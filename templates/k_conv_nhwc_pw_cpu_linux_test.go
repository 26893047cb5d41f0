//go:build linux

package templates

import "syscall"

// threadCPUNanos is the calling thread's CPU time (user+sys) in ns: on a
// machine other jobs load, it counts the kernel's work, not its waits.
func threadCPUNanos() int64 {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
