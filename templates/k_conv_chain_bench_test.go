//go:build linux

package templates

import (
	"fmt"
	"math/rand"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// BenchmarkConvChain times mobilenet_v2's inverted bottlenecks as one
// cuvil::FusedConvChain (chain) against the three FusedConv nodes it
// replaces (split), weights prepacked as gen stores them, alternating the
// two in one loop so that a loaded machine slows both alike. At 1 thread
// it reports the calling thread's CPU time per run (the kernel's work),
// at 2 threads the wall time and the process's CPU time; medians over
// the rounds. Run with -benchtime=1x (each b.N is the whole comparison).
func BenchmarkConvChain(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	blocks := []struct {
		name            string
		c, ce, m, hw, s int
		res             bool
		k               int // depthwise kernel (0: 3)
	}{
		{"mn8_40_120_28_5x5", 40, 120, 40, 28, 1, true, 5},
		{"mn9_80_240_14_5x5", 80, 240, 80, 14, 1, true, 5},
		{"mn12_112_672_14_3x3", 112, 672, 112, 14, 1, true, 3},
		{"mn13_192_1152_7_5x5", 192, 1152, 192, 7, 1, true, 5},
		{"f1_dw32_112", 32, 0, 16, 112, 1, false, 0},
		{"f2_16_96_112_s2", 16, 96, 24, 112, 2, false, 0},
		{"f3_24_144_56", 24, 144, 24, 56, 1, true, 0},
		{"f4_24_144_56_s2", 24, 144, 32, 56, 2, false, 0},
		{"f5_32_192_28", 32, 192, 32, 28, 1, true, 0},
		{"f7_32_192_28_s2", 32, 192, 64, 28, 2, false, 0},
		{"f8_64_384_14", 64, 384, 64, 14, 1, true, 0},
		{"f12_96_576_14", 96, 576, 96, 14, 1, true, 0},
		{"f14_96_576_14_s2", 96, 576, 160, 14, 2, false, 0},
		{"f15_160_960_7", 160, 960, 160, 7, 1, true, 0},
		{"f17_160_960_7", 160, 960, 320, 7, 1, false, 0},
	}
	relu6 := Attrs{"activation": "Clip", "activation_params": []float32{0, 6}}
	pack := func(w *Tensor, grp int) *Tensor {
		p, _ := PrepackConvWeightsNHWC(w.F32(), w.Shape, grp)
		return &Tensor{DType: F32, Shape: []int{len(p)}, Data: p}
	}
	for _, threads := range []int{1, 2} {
		for _, c := range blocks {
			ce := c.ce
			if ce == 0 {
				ce = c.c
			}
			x := nhwcOf(nnRand(r, 1, c.c, c.hw, c.hw), F32)
			oh := (c.hw-1)/c.s + 1
			var z *Tensor
			if c.res {
				z = nnRand(r, 1, oh, oh, c.m)
			}
			kk := max(c.k, 3)
			pd := int64(kk / 2)
			wd, bd := nnRand(r, ce, 1, kk, kk), nnRand(r, ce)
			wp, bp := nnRand(r, c.m, ce, 1, 1), nnRand(r, c.m)
			dwAttrs := Attrs{"group": int64(ce), "pads": []int64{pd, pd, pd, pd}, "strides": []int64{int64(c.s), int64(c.s)}, "layout": "NHWC", ConvPackedAttr: ints64(wd.Shape)}
			for k, v := range relu6 {
				dwAttrs[k] = v
			}
			chainAttrs := Attrs{"kernel_shape": []int64{int64(kk), int64(kk)}, "pads": []int64{pd, pd, pd, pd}, "strides": []int64{int64(c.s), int64(c.s)}, "dw_activation": "Clip", "dw_activation_params": []float32{0, 6}}
			var split []*Node
			var shapes []int64
			chainIn := []*Tensor{x, nil, nil, pack(wd, ce), bd, pack(wp, 1), bp, z}
			dIn := x
			if c.ce > 0 {
				we, be := nnRand(r, ce, c.c, 1, 1), nnRand(r, ce)
				a := Attrs{"layout": "NHWC", ConvPackedAttr: ints64(we.Shape)}
				for k, v := range relu6 {
					a[k] = v
				}
				e := nnNode("cuvil::FusedConv", 1, a, 1, x, pack(we, 1), be)
				split = append(split, e)
				dIn = e.Out[0]
				chainIn[1], chainIn[2] = pack(we, 1), be
				chainAttrs["expand_activation"], chainAttrs["expand_activation_params"] = "Clip", []float32{0, 6}
				shapes = append(shapes, ints64(we.Shape)...)
			}
			d := nnNode("cuvil::FusedConv", 1, dwAttrs, 1, dIn, pack(wd, ce), bd)
			pIn := []*Tensor{d.Out[0], pack(wp, 1), bp}
			if z != nil {
				pIn = append(pIn, z)
			}
			p := nnNode("cuvil::FusedConv", 1, Attrs{"layout": "NHWC", ConvPackedAttr: ints64(wp.Shape)}, 1, pIn...)
			split = append(split, d, p)
			shapes = append(shapes, ints64(wd.Shape)...)
			shapes = append(shapes, ints64(wp.Shape)...)
			chainAttrs[convChainPackedAttr] = shapes
			chain := nnNode("cuvil::FusedConvChain", 1, chainAttrs, 1, chainIn...)
			pool := NewWorkPool(WithThreads(threads))
			for _, n := range append(split, chain) {
				n.Pool = pool
			}
			b.Run(fmt.Sprintf("%s/threads=%d", c.name, threads), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				run := func(ns []*Node, reps int) (cpu, wall float64) {
					c0, p0, t0 := threadClockNanos(), procCPUNanos(), time.Now()
					for i := 0; i < reps; i++ {
						for _, n := range ns {
							if err := Kernels[n.Op](n); err != nil {
								b.Fatal(err)
							}
						}
					}
					wall = float64(time.Since(t0).Nanoseconds()) / float64(reps)
					if threads == 1 {
						return float64(threadClockNanos()-c0) / float64(reps), wall
					}
					return float64(procCPUNanos()-p0) / float64(reps), wall
				}
				run(split, 3)
				run([]*Node{chain}, 3)
				var sc, cc, sw, cw []float64
				for round := 0; round < 41; round++ {
					a, aw := run(split, 5)
					bb, bw := run([]*Node{chain}, 5)
					sc, cc, sw, cw = append(sc, a), append(cc, bb), append(sw, aw), append(cw, bw)
				}
				med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
				b.ReportMetric(med(sc)/1e3, "split-cpu-us")
				b.ReportMetric(med(cc)/1e3, "chain-cpu-us")
				b.ReportMetric(med(cc)/med(sc), "chain/split-cpu")
				b.ReportMetric(med(cw)/med(sw), "chain/split-wall")
			})
			pool.Close()
		}
	}
}

// threadClockNanos is the calling thread's CPU clock in ns
// (CLOCK_THREAD_CPUTIME_ID: exact, where getrusage counts scheduler ticks).
func threadClockNanos() int64 {
	var ts syscall.Timespec
	const clockThreadCPUTime = 3
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return ts.Nano()
}

// procCPUNanos is the process's CPU time (user+sys, all threads) in ns.
func procCPUNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkConvChainSplit times mobilenet_v2- and mnasnet-like chains at
// 2 threads in row bands (force=1) against the channel split (force=2),
// alternating, with 1 thread's CPU time: medians over the rounds.
func BenchmarkConvChainSplit(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	blocks := []struct {
		name            string
		c, ce, m, hw, s int
	}{
		{"f2_16_96_112_s2", 16, 96, 24, 112, 2},
		{"f3_24_144_56", 24, 144, 24, 56, 1},
		{"f4_24_144_56_s2", 24, 144, 32, 56, 2},
		{"f5_32_192_28", 32, 192, 32, 28, 1},
		{"f7_32_192_28_s2", 32, 192, 64, 28, 2},
		{"f8_64_384_14", 64, 384, 64, 14, 1},
		{"f12_96_576_14", 96, 576, 96, 14, 1},
		{"f14_96_576_14_s2", 96, 576, 160, 14, 2},
		{"f15_160_960_7", 160, 960, 160, 7, 1},
		{"mn13_96_576_14_5x5", 96, 576, 192, 14, 1},
		{"mn_1152_7_5x5", 192, 1152, 192, 7, 1},
	}
	pack := func(w *Tensor, grp int) *Tensor {
		p, _ := PrepackConvWeightsNHWC(w.F32(), w.Shape, grp)
		return &Tensor{DType: F32, Shape: []int{len(p)}, Data: p}
	}
	for _, c := range blocks {
		k := 3
		if c.name[:2] == "mn" {
			k = 5
		}
		x := nhwcOf(nnRand(r, 1, c.c, c.hw, c.hw), F32)
		we, be := nnRand(r, c.ce, c.c, 1, 1), nnRand(r, c.ce)
		wd, bd := nnRand(r, c.ce, 1, k, k), nnRand(r, c.ce)
		wp, bp := nnRand(r, c.m, c.ce, 1, 1), nnRand(r, c.m)
		pd := int64(k / 2)
		attrs := Attrs{"kernel_shape": []int64{int64(k), int64(k)}, "pads": []int64{pd, pd, pd, pd}, "strides": []int64{int64(c.s), int64(c.s)},
			"dw_activation": "Clip", "dw_activation_params": []float32{0, 6}, "expand_activation": "Clip", "expand_activation_params": []float32{0, 6}}
		var shapes []int64
		for _, w := range []*Tensor{we, wd, wp} {
			shapes = append(shapes, ints64(w.Shape)...)
		}
		attrs[convChainPackedAttr] = shapes
		in := []*Tensor{x, pack(we, 1), be, pack(wd, c.ce), bd, pack(wp, 1), bp}
		n1 := nnNode("cuvil::FusedConvChain", 1, attrs, 1, in...)
		n2 := nnNode("cuvil::FusedConvChain", 1, attrs, 1, in...)
		n1.Pool = NewWorkPool(WithThreads(1))
		n2.Pool = NewWorkPool(WithThreads(2))
		b.Run(c.name, func(b *testing.B) {
			// Each part's thread CPU time (a loaded machine leaves it
			// nearly alone): crit sums each section's longest part (the
			// wall on two idle cores, less the hand-offs), work all parts.
			var begin, took [4][8]int64
			convChainPartHook = func(stage, i int, end bool) {
				if end {
					took[stage][i] += threadClockNanos() - begin[stage][i]
				} else {
					begin[stage][i] = threadClockNanos()
				}
			}
			defer func() { convChainPartHook = nil }()
			run := func(n *Node, force, reps int) (wall, crit, work float64) {
				convChainForce = force
				t0 := time.Now()
				took = [4][8]int64{}
				for i := 0; i < reps; i++ {
					if err := FusedConvChain(n); err != nil {
						b.Fatal(err)
					}
				}
				convChainForce = 0
				wall = float64(time.Since(t0).Nanoseconds())
				for _, s := range took {
					crit += float64(slices.Max(s[:]))
					for _, v := range s {
						work += float64(v)
					}
				}
				return wall / float64(reps), crit / float64(reps), work / float64(reps)
			}
			run(n1, 1, 3)
			run(n2, 1, 3)
			run(n2, 2, 3)
			var one, rows, stg, rc, sc, rw, sw []float64
			for round := 0; round < 21; round++ {
				_, _, w1 := run(n1, 1, 5)
				a, ac, aw := run(n2, 1, 5)
				s, scr, swk := run(n2, 2, 5)
				one, rows, stg = append(one, w1), append(rows, a), append(stg, s)
				rc, sc, rw, sw = append(rc, ac), append(sc, scr), append(rw, aw), append(sw, swk)
			}
			med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
			b.ReportMetric(med(one)/1e3, "1T-cpu-us")
			b.ReportMetric(med(rows)/med(stg), "wall-rows/stages")
			b.ReportMetric(med(rc)/1e3, "rows-crit-us")
			b.ReportMetric(med(sc)/1e3, "stages-crit-us")
			b.ReportMetric(med(rw)/med(one), "rows-work/1T")
			b.ReportMetric(med(sw)/med(one), "stages-work/1T")
		})
		n1.Pool.Close()
		n2.Pool.Close()
	}
}
