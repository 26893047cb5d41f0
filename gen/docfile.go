package gen

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cuvil/cuvil/ir"
)

// copyStats counts the files gen copied from templates/ into a package.
type copyStats struct{ files, bytes, asm int }

func (s *copyStats) add(n int) { s.files++; s.bytes += n }

func (c *compiled) docFile(m *ir.Model, opts Options, header string, weightBytes int, copied copyStats) []byte {
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	add("Package %s runs the ONNX model %s, compiled ahead of time by cuvil %s.", opts.Package, opts.Source, Version)
	add("")
	src := "Source: " + opts.Source
	if m.SourceHash != "" {
		src += ", sha256 " + m.SourceHash
	}
	if m.Producer != "" {
		src += ", produced by " + m.Producer
	}
	add("%s.", src)
	add("")
	add("Inputs:")
	add("")
	for i, v := range c.inputs {
		add("  - %s (ONNX %q): %s", c.inNames[i], v.Name, v.Type)
	}
	add("")
	add("Outputs:")
	add("")
	for i, v := range c.outputs {
		add("  - %s (ONNX %q): %s", c.outNames[i], v.Name, v.Type)
	}
	add("")
	if len(c.syms) > 0 {
		add("Symbolic dims, sized by the inputs at run time: %s.", strings.Join(c.syms, ", "))
		add("")
	}
	var opsets []string
	for d, v := range m.Opsets {
		opsets = append(opsets, fmt.Sprintf("%s %d", domainName(d), v))
	}
	sort.Strings(opsets)
	add("Opsets: %s.", strings.Join(opsets, ", "))
	if len(opts.Passes) > 0 {
		add("Passes run: %s.", strings.Join(opts.Passes, ", "))
	} else {
		add("Passes run: none.")
	}
	add("")
	plan := fmt.Sprintf("Memory plan: %d intermediate values in %d bytes of arenas known at compile time (sum of their sizes %d; %d computed in place)",
		len(c.plan.Buffers), c.plan.StaticBytes(), c.plan.Sum(), c.plan.InPlaceCount())
	if d := c.plan.DynamicValues(); d > 0 {
		plan += fmt.Sprintf(", plus %d values sized at run time", d)
	}
	add("%s.", plan)
	if opts.Weights == WeightsFile {
		add("Weights: %d constants, %d bytes in weights.bin (CRC-32C %08x), not embedded (-weights file): load them with NewFromFile(path) or NewFromReader. Kernel calls: %d.", len(c.constTensors), weightBytes, c.weightsSum, len(c.nodes))
	} else {
		add("Weights: %d constants, %d bytes in weights.bin, embedded and read in place by New. Kernel calls: %d.", len(c.constTensors), weightBytes, len(c.nodes))
	}
	add("Runtime and kernels copied from cuvil's templates: %d files (%d of them assembly), %d bytes.", copied.files, copied.asm, copied.bytes)

	var b strings.Builder
	b.WriteString(header + "\n\n")
	for _, l := range lines {
		l = commentText(l)
		if l == "" {
			b.WriteString("//\n")
		} else {
			b.WriteString("// " + l + "\n")
		}
	}
	b.WriteString("package " + opts.Package + "\n")
	return []byte(b.String())
}
