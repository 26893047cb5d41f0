package gen

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cuvil/cuvil/ir"
)

func (c *compiled) docFile(m *ir.Model, opts Options, header string, weightBytes int) []byte {
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
	values := 0
	for _, s := range c.plan.slots {
		values += len(s.values)
	}
	plan := fmt.Sprintf("Memory plan: %d intermediate values in %d slots, %d bytes known at compile time", values, len(c.plan.slots), c.plan.StaticBytes())
	if d := c.plan.DynamicSlots(); d > 0 {
		plan += fmt.Sprintf(" (plus %d slots sized at run time)", d)
	}
	add("%s.", plan)
	add("Weights: %d constants, %d bytes in weights.bin. Kernel calls: %d.", len(c.constTensors), weightBytes, len(c.nodes))

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
