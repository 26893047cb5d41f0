// Command relax generates cpuRelax, the spin-wait hint of package
// templates' worker pool (templates/rt_pool.go spinFor): a burst of PAUSE
// instructions between two polls of a section's state. PAUSE tells the
// core that the thread only waits, so a polling worker leaves the
// execution units to the thread it shares a physical core with (on a VM
// the two vCPUs may be such siblings) and does not flood the memory
// pipeline with loads of a line another core is about to write. It is a
// runtime pair (rt_), not a kernel one: every generated package's pool
// calls it.
//
//	go generate ./asmgen/amd64/relax
package main

//go:generate go run . -pkg templates -out ../../../templates/rt_relax_amd64.s -stubs ../../../templates/rt_relax_amd64.go

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
)

// pauses is the burst length: about 0.2 us on Zen 3 (PAUSE ~25 ns), 0.3
// us on Skylake and later (~40 ns), so a worker notices a new section
// within a fraction of a microsecond and polls a few million times a
// second at most.
const pauses = 8

func main() {
	ConstraintExpr("amd64,!purego")
	TEXT("cpuRelax", NOSPLIT, "func()")
	Doc(fmt.Sprintf("cpuRelax executes PAUSE %d times: the pause between two polls of a spin-wait.", pauses))
	for i := 0; i < pauses; i++ {
		PAUSE()
	}
	RET()
	Generate()
}
