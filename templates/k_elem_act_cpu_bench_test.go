package templates

import (
	"math/rand"
	"runtime"
	"testing"
)

// BenchmarkActRowsCPU runs each float32 activation row on 64K elements
// (normal inputs, sd 4) and reports the calling thread's CPU time per
// element (cpu-ns/elem). It builds for every GOARCH, so under
// qemu-aarch64-static it compares the NEON rows with -tags purego on the
// same work (qemu's host CPU time: emulated work, not arm64 speed).
//
//	GOARCH=arm64 go test -exec qemu-aarch64-static -run '^$' -bench ActRowsCPU -benchtime 20x ./templates/
func BenchmarkActRowsCPU(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	x := make([]float32, 64<<10)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 4)
	}
	s := make([]float32, len(x))
	for i := range s {
		s[i] = 0.25
	}
	y := make([]float32, len(x))
	for _, k := range []struct {
		name string
		f    func([]float32)
	}{
		{"sigmoid", sigmoid32}, {"silu", silu32}, {"hardSwish", hardSwish32}, {"exp", exp32},
		{"tanh", tanh32}, {"geluTanh", geluTanh32}, {"mish", mish32},
		{"elu", func(y []float32) { elu32(y, 0.7) }},
		{"hardSigmoid", func(y []float32) { hardSigmoid32(y, 0.2, 0.5) }},
		{"leakyRelu", func(y []float32) { leakyRelu32(y, 0.1) }},
		{"prelu", func(y []float32) { prelu32(y, s) }},
	} {
		b.Run(k.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := threadCPUNanos()
			for i := 0; i < b.N; i++ {
				copy(y, x)
				k.f(y)
			}
			if cpu := threadCPUNanos() - cpu0; cpu0 != 0 && cpu > 0 {
				b.ReportMetric(float64(cpu)/float64(b.N)/float64(len(x)), "cpu-ns/elem")
			}
		})
	}
}
