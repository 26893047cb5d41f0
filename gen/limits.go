package gen

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/cuvil/cuvil/ir"
)

// checkArena refuses a memory plan whose arenas (allocated by NewSession)
// exceed max bytes (0: DefaultMaxArena), naming the largest values.
func checkArena(p *memPlan, max int64) error {
	if max == 0 {
		max = DefaultMaxArena
	}
	if p == nil || max < 0 || p.Total() <= max {
		return nil
	}
	bufs := append([]planBuffer(nil), bufferList(p)...)
	sort.SliceStable(bufs, func(i, j int) bool { return bufs[i].bytes > bufs[j].bytes })
	var top []string
	for i := 0; i < len(bufs) && i < 3; i++ {
		top = append(top, fmt.Sprintf("%s (%s) %s", bufs[i].what, bufs[i].typ, FormatBytes(bufs[i].bytes)))
	}
	return fmt.Errorf("gen: the memory plan needs %s, more than the limit of %s (compile -max-arena raises it); largest values: %s",
		FormatBytes(p.Total()), FormatBytes(max), strings.Join(top, ", "))
}

type planBuffer struct {
	what, typ string
	bytes     int64
}

func bufferList(p *memPlan) []planBuffer {
	out := make([]planBuffer, 0, len(p.Buffers))
	for _, b := range p.Buffers {
		what := fmt.Sprintf("%q", b.Value.Name)
		if d := b.Value.Def; d != nil {
			what = fmt.Sprintf("%q of node %q (%s)", b.Value.Name, d.Name, d.Op)
		}
		out = append(out, planBuffer{what, b.Value.Type.String(), b.Bytes})
	}
	return out
}

// checkWeights refuses constants totalling more than max bytes (0:
// DefaultMaxWeights), naming the largest.
func checkWeights(ts []*ir.Tensor, max int64) error {
	if max == 0 {
		max = DefaultMaxWeights
	}
	var total int64
	for _, t := range ts {
		total += int64(len(t.Raw))
		for _, s := range t.Strings {
			total += int64(len(s)) + 8
		}
	}
	if max < 0 || total <= max {
		return nil
	}
	big := append([]*ir.Tensor(nil), ts...)
	sort.SliceStable(big, func(i, j int) bool { return len(big[i].Raw) > len(big[j].Raw) })
	var top []string
	for i := 0; i < len(big) && i < 3; i++ {
		top = append(top, fmt.Sprintf("%q %s%v %s", big[i].Name, big[i].DType, big[i].Shape, FormatBytes(int64(len(big[i].Raw)))))
	}
	return fmt.Errorf("gen: the weights take %s, more than the limit of %s (compile -max-weights raises it); largest: %s",
		FormatBytes(total), FormatBytes(max), strings.Join(top, ", "))
}

// FormatBytes writes n in the largest binary unit that keeps it >= 1.
func FormatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	f, u := float64(n), 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", f, units[u])
}

// ParseBytes reads a size: a number of bytes, optionally with a unit
// (KiB, MiB, GiB, TiB, or KB, MB, GB, TB for powers of 1000; K, M, G, T
// are binary). "-1" means no limit.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "-1" {
		return -1, nil
	}
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v > 0) || v*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("size %q: want a positive number of bytes, e.g. 8GiB or 512MiB (-1 for no limit)", s)
	}
	return int64(v * float64(mult)), nil
}
