package gen

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/cuvil/cuvil/ir"

	"github.com/dave/jennifer/jen"
)

// lineComment renders lines as // comments, one per line.
func lineComment(lines ...string) *jen.Statement {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteString("\n")
		}
		l = commentText(l)
		if l == "" {
			b.WriteString("//")
		} else {
			b.WriteString("// " + l)
		}
	}
	return jen.Comment(b.String())
}

func dtypeID(dt ir.DType) jen.Code {
	switch dt {
	case ir.F32:
		return jen.Id("F32")
	case ir.U8:
		return jen.Id("U8")
	case ir.I8:
		return jen.Id("I8")
	case ir.U16:
		return jen.Id("U16")
	case ir.I16:
		return jen.Id("I16")
	case ir.I32:
		return jen.Id("I32")
	case ir.I64:
		return jen.Id("I64")
	case ir.String:
		return jen.Id("String")
	case ir.Bool:
		return jen.Id("Bool")
	case ir.F16:
		return jen.Id("F16")
	case ir.F64:
		return jen.Id("F64")
	case ir.U32:
		return jen.Id("U32")
	case ir.U64:
		return jen.Id("U64")
	case ir.BF16:
		return jen.Id("BF16")
	case ir.F8E4M3FN:
		return jen.Id("F8E4M3FN")
	case ir.F8E4M3FNUZ:
		return jen.Id("F8E4M3FNUZ")
	case ir.F8E5M2:
		return jen.Id("F8E5M2")
	case ir.F8E5M2FNUZ:
		return jen.Id("F8E5M2FNUZ")
	case ir.U4:
		return jen.Id("U4")
	case ir.I4:
		return jen.Id("I4")
	case ir.F4E2M1:
		return jen.Id("F4E2M1")
	case ir.F8E8M0:
		return jen.Id("F8E8M0")
	case ir.U2:
		return jen.Id("U2")
	case ir.I2:
		return jen.Id("I2")
	}
	return jen.Id("DType").Call(jen.Lit(int(dt)))
}

func intsLit(v []int64) *jen.Statement {
	items := make([]jen.Code, len(v))
	for i, x := range v {
		items[i] = jen.Lit(int(x))
	}
	return jen.Index().Int().Values(items...)
}

// floatCode writes a float32 constant exactly (shortest round-trip form).
func floatCode(f float32) jen.Code {
	switch {
	case math.IsNaN(float64(f)):
		return jen.Float32().Call(jen.Qual("math", "NaN").Call())
	case math.IsInf(float64(f), 1):
		return jen.Float32().Call(jen.Qual("math", "Inf").Call(jen.Lit(1)))
	case math.IsInf(float64(f), -1):
		return jen.Float32().Call(jen.Qual("math", "Inf").Call(jen.Lit(-1)))
	}
	s := strconv.FormatFloat(float64(f), 'g', -1, 32)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return jen.Id(s)
}

// intCode writes an integer constant without a conversion around it.
func intCode(x int64) jen.Code { return jen.Id(strconv.FormatInt(x, 10)) }

// attrValue renders one attribute as the Go value templates.Attrs holds.
func (c *compiled) attrValue(a *ir.Attr) jen.Code {
	switch a.Kind {
	case ir.AttrInt:
		return jen.Int64().Call(intCode(a.I))
	case ir.AttrFloat:
		return jen.Float32().Call(floatCode(a.F))
	case ir.AttrString:
		return jen.Lit(a.S)
	case ir.AttrInts:
		items := make([]jen.Code, len(a.Ints))
		for i, x := range a.Ints {
			items[i] = intCode(x)
		}
		return jen.Index().Int64().Values(items...)
	case ir.AttrFloats:
		items := make([]jen.Code, len(a.Floats))
		for i, x := range a.Floats {
			items[i] = floatCode(x)
		}
		return jen.Index().Float32().Values(items...)
	case ir.AttrStrings:
		items := make([]jen.Code, len(a.Strings))
		for i, x := range a.Strings {
			items[i] = jen.Lit(x)
		}
		return jen.Index().String().Values(items...)
	case ir.AttrTensor:
		return jen.Op("&").Id("m").Dot("consts").Index(jen.Lit(c.tensorIndex[a.T]))
	}
	panic("gen: attribute kind checked in lower: " + a.Kind.String())
}

// valueRef is the expression NewSession uses for a value's tensor.
func (c *compiled) valueRef(v *ir.Value) jen.Code {
	if v == nil {
		return jen.Nil()
	}
	if k, ok := c.constIndex[v]; ok {
		return jen.Op("&").Id("m").Dot("consts").Index(jen.Lit(k))
	}
	for i, in := range c.inputs {
		if in == v {
			return jen.Op("&").Id("s").Dot("inputs").Index(jen.Lit(i))
		}
	}
	return jen.Op("&").Id("s").Dot("vals").Index(jen.Lit(c.valIndex[v]))
}

// sessionRef is valueRef inside Session methods, where the model is
// s.model.
func (c *compiled) sessionRef(v *ir.Value) jen.Code {
	if k, ok := c.constIndex[v]; ok {
		return jen.Op("&").Id("s").Dot("model").Dot("consts").Index(jen.Lit(k))
	}
	return c.valueRef(v)
}

// outputRef is the expression Run returns for output i.
func (c *compiled) outputRef(i int) jen.Code {
	if c.outCopy[i] {
		return jen.Op("&").Id("s").Dot("outs").Index(jen.Lit(i))
	}
	return jen.Op("&").Id("s").Dot("vals").Index(jen.Lit(c.valIndex[c.outputs[i]]))
}

func valueNames(vs []*ir.Value) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		if v == nil {
			parts[i] = "_"
		} else {
			parts[i] = v.Name
		}
	}
	return strings.Join(parts, ", ")
}

func (c *compiled) modelFile(pkg, header string) ([]byte, error) {
	f := jen.NewFile(pkg)
	f.HeaderComment(header)

	if c.weightsMode != WeightsFile {
		f.Anon("embed")
	}

	// Input and Output.
	f.Comment("Input holds the model's inputs. Every field must be set.")
	f.Type().Id("Input").StructFunc(func(g *jen.Group) {
		for i, v := range c.inputs {
			g.Add(lineComment(fmt.Sprintf("%s is ONNX input %q: %s.%s", c.inNames[i], v.Name, v.Type, mapHint(v.Type, true))))
			g.Id(c.inNames[i]).Op("*").Id("Tensor")
		}
	})
	f.Line()
	f.Comment("Output holds the model's outputs.")
	f.Type().Id("Output").StructFunc(func(g *jen.Group) {
		for i, v := range c.outputs {
			g.Add(lineComment(fmt.Sprintf("%s is ONNX output %q: %s.%s", c.outNames[i], v.Name, v.Type, mapHint(v.Type, false))))
			g.Id(c.outNames[i]).Op("*").Id("Tensor")
		}
	})
	f.Line()

	// Tables.
	if c.weightsMode == WeightsFile {
		f.Comment("The weights are not embedded (compiled with -weights file): NewFromFile and")
		f.Comment("NewFromReader load a weights.bin of this size and CRC-32C.")
	} else {
		f.Add(lineComment("cuvilWeights is weights.bin, in read-only memory: New takes the", "constants as views of it."))
		f.Comment("//go:embed weights.bin")
		f.Var().Id("cuvilWeights").String()
		f.Line()
		f.Comment("The size and CRC-32C of weights.bin.")
	}
	f.Const().Defs(
		jen.Id("cuvilWeightsSize").Op("=").Lit(int(c.weightsSize)),
		jen.Id("cuvilWeightsCRC").Op("=").Id(fmt.Sprintf("0x%08x", c.weightsSum)),
	)
	f.Line()
	f.Comment("cuvilConsts says where each constant lives in weights.bin.")
	f.Var().Id("cuvilConsts").Op("=").Index(jen.Op("...")).Id("cuvilConst").ValuesFunc(func(g *jen.Group) {
		for _, e := range c.table {
			fields := []jen.Code{
				jen.Id("name").Op(":").Lit(e.name),
				jen.Id("dtype").Op(":").Add(dtypeID(e.dtype)),
				jen.Id("shape").Op(":").Add(intsLit(e.shape)),
				jen.Id("off").Op(":").Lit(int(e.off)),
				jen.Id("size").Op(":").Lit(int(e.size)),
			}
			if e.stored != 0 {
				fields = append(fields, jen.Id("stored").Op(":").Add(dtypeID(e.stored)))
			}
			g.Line().Values(fields...)
		}
		if len(c.table) > 0 {
			g.Line()
		}
	})
	f.Line()
	if anyStoredHalf(c.constTensors) {
		f.Comment("Some constants are stored f16 in weights.bin: New widens them with WidenF16.")
		f.Func().Id("init").Params().Block(jen.Id("cuvilWidenF16").Op("=").Id("WidenF16"))
		f.Line()
	}
	f.Comment("cuvilSymNames are the symbolic dims of the inputs.")
	f.Var().Id("cuvilSymNames").Op("=").Index().String().ValuesFunc(func(g *jen.Group) {
		for _, s := range c.syms {
			g.Lit(s)
		}
	})
	f.Line()
	f.Comment("cuvilInputs are the inputs as declared, for the shape guards.")
	f.Var().Id("cuvilInputs").Op("=").Index(jen.Op("...")).Id("cuvilInputSpec").ValuesFunc(func(g *jen.Group) {
		for _, v := range c.inputs {
			dims := make([]jen.Code, len(v.Type.Shape))
			for i, d := range v.Type.Shape {
				if d.IsConst() {
					dims[i] = jen.Values(jen.Id("size").Op(":").Lit(int(d.Size)), jen.Id("sym").Op(":").Lit(-1))
				} else {
					dims[i] = jen.Values(jen.Id("sym").Op(":").Lit(c.symIndex[d.Sym]))
				}
			}
			if v.Type.Kind == ir.MapKind {
				g.Line().Values(
					jen.Id("name").Op(":").Lit(v.Name),
					jen.Id("dtype").Op(":").Add(dtypeID(v.Type.ElemDType())),
					jen.Id("key").Op(":").Add(dtypeID(v.Type.DType)),
					jen.Id("kind").Op(":").Lit(int(v.Type.Kind)),
				)
				continue
			}
			if v.Type.Kind != ir.TensorKind {
				g.Line().Values(
					jen.Id("name").Op(":").Lit(v.Name),
					jen.Id("dtype").Op(":").Add(dtypeID(v.Type.ElemDType())),
					jen.Id("kind").Op(":").Lit(int(v.Type.Kind)),
				)
				continue
			}
			g.Line().Values(
				jen.Id("name").Op(":").Lit(v.Name),
				jen.Id("dtype").Op(":").Add(dtypeID(v.Type.DType)),
				jen.Id("dims").Op(":").Index().Id("cuvilDim").Values(dims...),
			)
		}
		if len(c.inputs) > 0 {
			g.Line()
		}
	})
	f.Line()

	f.Comment("cuvilProfNodes names the main graph's nodes for the profiler (WithProfile).")
	f.Var().Id("cuvilProfNodes").Op("=").Index(jen.Op("...")).Id("NodeProfile").ValuesFunc(func(g *jen.Group) {
		for _, n := range c.run {
			g.Line().Values(jen.Id("Name").Op(":").Lit(n.Name), jen.Id("Op").Op(":").Lit(n.Op))
		}
		if len(c.run) > 0 {
			g.Line()
		}
	})
	f.Line()
	f.Comment("cuvilTraceNodes is, for each node of the main graph, its index in Session.nodes")
	f.Comment("(-1: a control-flow node), for the shapes in a trace (WithTrace).")
	f.Var().Id("cuvilTraceNodes").Op("=").Index(jen.Op("...")).Int32().ValuesFunc(func(g *jen.Group) {
		for _, n := range c.run {
			i, ok := c.nodeIndex[n]
			if !ok || isControl(n) {
				i = -1
			}
			g.Lit(i)
		}
	})
	f.Line()

	c.nodeTable(f)
	f.Line()
	c.viewTable(f)
	f.Line()

	// Model.
	f.Add(lineComment("Model is the compiled model: its weights. It is immutable after", "New and safe for concurrent use."))
	f.Type().Id("Model").Struct(
		jen.Id("consts").Index(jen.Lit(len(c.constTensors))).Id("Tensor"),
		jen.Id("weights").String(), // the blob the constants are views of
		jen.Id("pool").Qual("sync", "Pool"),
	)
	f.Line()
	if c.weightsMode == WeightsFile {
		f.Add(lineComment("New returns an error: this package was compiled with -weights file, so", "its weights are not embedded. Use NewFromFile or NewFromReader."))
		f.Func().Id("New").Params().Params(jen.Op("*").Id("Model"), jen.Error()).Block(
			jen.Return(jen.Nil(), jen.Id("errCuvilNoEmbed")),
		)
		f.Line()
		f.Add(lineComment(
			"NewFromFile loads the weights from path, the weights.bin written with this",
			"package (or a copy of it). The file is mapped read-only where the platform",
			"can (linux, darwin), else read into memory; its size and checksum must be",
			"those compiled in, else the error says it is truncated, corrupted or from",
			"another compile. A mapped file must not change while the model uses it",
			"(write new weights to a new file and rename it into place). Call it once",
			"and share the Model; the mapping goes when the Model is unreachable."))
		f.Func().Id("NewFromFile").Params(jen.Id("path").String()).Params(jen.Op("*").Id("Model"), jen.Error()).Block(
			jen.List(jen.Id("blob"), jen.Id("release"), jen.Err()).Op(":=").Id("cuvilOpenWeights").Call(jen.Id("path"), jen.Id("cuvilWeightsSize"), jen.Id("cuvilWeightsCRC")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.List(jen.Id("m"), jen.Err()).Op(":=").Id("cuvilNewModel").Call(jen.Id("blob")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Id("release").Call(), jen.Return(jen.Nil(), jen.Err())),
			jen.Qual("runtime", "AddCleanup").Call(jen.Id("m"), jen.Func().Params(jen.Id("release").Func().Params()).Block(jen.Id("release").Call()), jen.Id("release")),
			jen.Return(jen.Id("m"), jen.Nil()),
		)
		f.Line()
		f.Add(lineComment(
			"NewFromReader reads size bytes of weights (weights.bin's contents) from r",
			"into memory and checks their size and checksum as NewFromFile does."))
		f.Func().Id("NewFromReader").Params(jen.Id("r").Qual("io", "ReaderAt"), jen.Id("size").Int64()).Params(jen.Op("*").Id("Model"), jen.Error()).Block(
			jen.List(jen.Id("blob"), jen.Err()).Op(":=").Id("cuvilReadWeights").Call(jen.Id("r"), jen.Id("size"), jen.Id("cuvilWeightsSize"), jen.Id("cuvilWeightsCRC")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.Return(jen.Id("cuvilNewModel").Call(jen.Id("blob"))),
		)
	} else {
		f.Add(lineComment("New loads the embedded weights: the numeric constants are views of", "them, not copies (see cuvilLoad). Call it once and share the Model."))
		f.Func().Id("New").Params().Params(jen.Op("*").Id("Model"), jen.Error()).Block(
			jen.Return(jen.Id("cuvilNewModel").Call(jen.Id("cuvilWeights"))),
		)
	}
	f.Line()
	f.Comment("cuvilNewModel makes a Model of the constants in blob.")
	f.Func().Id("cuvilNewModel").Params(jen.Id("blob").String()).Params(jen.Op("*").Id("Model"), jen.Error()).Block(
		jen.Id("m").Op(":=").Op("&").Id("Model").Values(jen.Id("weights").Op(":").Id("blob")),
		jen.If(jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("cuvilLoad").Call(jen.Id("blob"), jen.Id("cuvilConsts").Index(jen.Op(":")), jen.Id("m").Dot("consts").Index(jen.Op(":")), jen.False()), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Nil(), jen.Err()),
		),
		jen.Id("m").Dot("pool").Dot("New").Op("=").Func().Params().Any().Block(jen.Return(jen.Id("m").Dot("NewSession").Call())),
		jen.Return(jen.Id("m"), jen.Nil()),
	)
	f.Line()

	// Session.
	f.Add(lineComment("Session holds the memory of one run: input headers, intermediate", "tensors (views of buffers shared according to the memory plan, see", "doc.go) and kernel scratch. It is not safe for concurrent use."))
	f.Type().Id("Session").Struct(
		jen.Id("model").Op("*").Id("Model"),
		jen.Id("closed").Bool(),
		jen.Id("at").String(), // the main-graph node running, for a panic's error
		jen.Id("pool").Op("*").Id("WorkPool"),
		jen.Id("prof").Op("*").Id("Profiler"), // nil unless WithProfile
		jen.Id("inputs").Index(jen.Lit(len(c.inputs))).Id("Tensor"),
		jen.Id("vals").Index(jen.Lit(len(c.values))).Id("Tensor"),
		jen.Id("outs").Index(jen.Lit(len(c.outputs))).Id("Tensor"),
		jen.Id("nodes").Index(jen.Lit(len(c.nodes))).Id("Node"),
	)
	f.Line()
	f.Add(lineComment("NewSession returns a session that runs the model. Memory grows on the", "first Run at a given input shape and is reused afterwards. Its kernels", "run on a pool of WithThreads(n) goroutines (default GOMAXPROCS) that", "lives until Close."))
	f.Func().Params(jen.Id("m").Op("*").Id("Model")).Id("NewSession").Params(jen.Id("opts").Op("...").Id("Option")).Op("*").Id("Session").BlockFunc(func(g *jen.Group) {
		g.Id("s").Op(":=").Op("&").Id("Session").Values(jen.Id("model").Op(":").Id("m"), jen.Id("pool").Op(":").Id("NewWorkPool").Call(jen.Id("opts").Op("...")))
		g.Comment("A session dropped without Close (Model.Run's pool) still stops its workers.")
		g.Qual("runtime", "AddCleanup").Call(jen.Id("s"), jen.Parens(jen.Op("*").Id("WorkPool")).Dot("Close"), jen.Id("s").Dot("pool"))
		g.Id("s").Dot("prof").Op("=").Id("NewProfiler").Call(jen.Id("cuvilProfNodes").Index(jen.Op(":")), jen.Id("opts").Op("..."))
		g.Id("s").Dot("prof").Dot("TraceNodes").Call(jen.Id("s").Dot("pool"), jen.Id("cuvilTraceNodes").Index(jen.Op(":")), jen.Id("s").Dot("nodes").Index(jen.Op(":")))
		c.emitPlan(g)
		c.initValues(g)
		g.Id("cuvilSetupNodes").Call(jen.Id("s").Dot("nodes").Index(jen.Op(":")), jen.Id("cuvilNodeTable").Index(jen.Op(":")), jen.Id("s").Dot("vals").Index(jen.Op(":")), jen.Id("s").Dot("inputs").Index(jen.Op(":")), jen.Id("m").Dot("consts").Index(jen.Op(":")), jen.Id("s").Dot("pool"))
		g.Return(jen.Id("s"))
	})
	f.Line()

	fail := jen.Return(jen.Id("Output").Values(), jen.Err())
	f.Add(lineComment("Run checks the inputs against the declared dtypes and shapes and runs", "the model. The outputs point into the session's memory: they are valid", "until the next Run or Close. Run does not allocate once the session has", "run at the same input shapes."))
	f.Func().Params(jen.Id("s").Op("*").Id("Session")).Id("Run").Params(jen.Id("in").Id("Input")).Params(jen.Id("out").Id("Output"), jen.Err().Error()).BlockFunc(func(g *jen.Group) {
		g.If(jen.Id("s").Dot("closed")).Block(jen.Return(jen.Id("Output").Values(), jen.Id("errCuvilClosed")))
		// A kernel's panic (a bug) becomes an error naming the node. In a
		// cancelled run (RunContext), whatever failed did so on the parts
		// the pool skipped: the error is the cancellation.
		g.Defer().Func().Params().Block(
			jen.If(jen.Id("r").Op(":=").Recover(), jen.Id("r").Op("!=").Nil()).Block(
				jen.List(jen.Id("out"), jen.Err()).Op("=").List(jen.Id("Output").Values(), jen.Id("cuvilPanicError").Call(jen.Id("s").Dot("at"), jen.Id("r"))),
			),
			jen.If(jen.Err().Op("!=").Nil().Op("&&").Id("s").Dot("pool").Dot("Cancelled").Call()).Block(
				jen.List(jen.Id("out"), jen.Err()).Op("=").List(jen.Id("Output").Values(), jen.Id("errCancelled")),
			),
		).Call()
		symsArg := jen.Nil()
		if len(c.syms) > 0 {
			minus := make([]jen.Code, len(c.syms))
			for i := range minus {
				minus[i] = jen.Lit(-1)
			}
			g.Id("syms").Op(":=").Index(jen.Lit(len(c.syms))).Int().Values(minus...)
			symsArg = jen.Id("syms").Index(jen.Op(":"))
		}
		for i := range c.inputs {
			field := jen.Id("in").Dot(c.inNames[i])
			g.If(jen.Err().Op(":=").Id("cuvilCheckInput").Call(jen.Op("&").Id("cuvilInputs").Index(jen.Lit(i)), field, symsArg), jen.Err().Op("!=").Nil()).Block(fail)
			g.Id("s").Dot("inputs").Index(jen.Lit(i)).Op("=").Op("*").Add(jen.Id("in").Dot(c.inNames[i]))
		}
		g.Id("s").Dot("prof").Dot("Start").Call()
		c.runChunks(f, g)
		for i := range c.outputs {
			if !c.outCopy[i] {
				continue
			}
			g.Id("cuvilCopyInto").Call(jen.Op("&").Id("s").Dot("outs").Index(jen.Lit(i)), c.sessionRef(c.outputs[i]))
		}
		g.Line()
		vals := make([]jen.Code, len(c.outputs))
		for i := range c.outputs {
			vals[i] = jen.Id(c.outNames[i]).Op(":").Add(c.outputRef(i))
		}
		g.Return(jen.Id("Output").Values(vals...), jen.Nil())
	})
	f.Line()

	c.bodyMethods(f)
	f.Line()

	f.Add(lineComment("Profile returns the wall time of each node of the main graph, in graph", "order, summed over the runs since NewSession or ResetProfile; nil unless", "the session was made with WithProfile()."))
	f.Func().Params(jen.Id("s").Op("*").Id("Session")).Id("Profile").Params().Index().Id("NodeProfile").Block(
		jen.Return(jen.Id("s").Dot("prof").Dot("Nodes").Call()),
	)
	f.Line()
	f.Comment("ResetProfile zeroes the profile and empties the trace (e.g. after warm-up runs).")
	f.Func().Params(jen.Id("s").Op("*").Id("Session")).Id("ResetProfile").Params().Block(
		jen.Id("s").Dot("prof").Dot("Reset").Call(),
	)
	f.Line()
	f.Add(lineComment("WriteTrace writes the runs since NewSession or ResetProfile as Chrome",
		"trace event JSON, which ui.perfetto.dev and chrome://tracing open: per",
		"run a slice holding one slice per main-graph node (name, op, input and",
		"output shapes), and the worker pool's parts of parallel kernels as",
		"slices on one thread per goroutine. The session must have been made",
		"with WithTrace(); otherwise WriteTrace writes nothing and returns an",
		"error."))
	f.Func().Params(jen.Id("s").Op("*").Id("Session")).Id("WriteTrace").Params(jen.Id("w").Qual("io", "Writer")).Error().Block(
		jen.If(jen.Op("!").Id("s").Dot("prof").Dot("Tracing").Call()).Block(
			jen.Return(jen.Qual("errors", "New").Call(jen.Lit(pkg+": WriteTrace: the session was not made WithTrace()"))),
		),
		jen.Return(jen.Id("s").Dot("prof").Dot("WriteTrace").Call(jen.Id("w"), jen.Lit(pkg))),
	)
	f.Line()

	f.Add(lineComment("Close releases the session's memory. The session must not be used", "afterwards; outputs it returned become invalid."))
	f.Func().Params(jen.Id("s").Op("*").Id("Session")).Id("Close").Params().Block(
		jen.Id("s").Dot("closed").Op("=").True(),
		jen.Id("s").Dot("pool").Dot("Close").Call(),
		jen.For(jen.Id("i").Op(":=").Range().Id("s").Dot("vals")).Block(
			jen.Id("s").Dot("vals").Index(jen.Id("i")).Op("=").Id("Tensor").Values(),
		),
		jen.For(jen.Id("i").Op(":=").Range().Id("s").Dot("outs")).Block(
			jen.Id("s").Dot("outs").Index(jen.Id("i")).Op("=").Id("Tensor").Values(),
		),
		jen.For(jen.Id("i").Op(":=").Range().Id("s").Dot("nodes")).Block(
			jen.Id("s").Dot("nodes").Index(jen.Id("i")).Op("=").Id("Node").Values(),
		),
	)
	f.Line()

	f.Add(lineComment(
		"RunContext is Run that stops early when ctx ends: it checks after every",
		"node and between the parts of a node's work, and returns an error that",
		"wraps ctx.Err() and names the node reached. The session stays usable.",
		"With a context that can end, it allocates a little per call (the",
		"context's callback)."))
	f.Func().Params(jen.Id("s").Op("*").Id("Session")).Id("RunContext").Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("in").Id("Input")).Params(jen.Id("Output"), jen.Error()).BlockFunc(func(g *jen.Group) {
		g.If(jen.Err().Op(":=").Id("ctx").Dot("Err").Call(), jen.Err().Op("!=").Nil()).Block(fail)
		g.If(jen.Id("ctx").Dot("Done").Call().Op("==").Nil()).Block(jen.Return(jen.Id("s").Dot("Run").Call(jen.Id("in"))))
		g.List(jen.Id("deadline"), jen.Id("_")).Op(":=").Id("ctx").Dot("Deadline").Call()
		g.Id("id").Op(":=").Id("s").Dot("pool").Dot("BeginRun").Call(jen.Id("deadline"))
		g.Id("stop").Op(":=").Qual("context", "AfterFunc").Call(jen.Id("ctx"), jen.Func().Params().Block(jen.Id("s").Dot("pool").Dot("Cancel").Call(jen.Id("id"))))
		g.List(jen.Id("out"), jen.Err()).Op(":=").Id("s").Dot("Run").Call(jen.Id("in"))
		g.Id("stop").Call()
		g.If(jen.Id("s").Dot("pool").Dot("EndRun").Call(jen.Id("id")).Op("&&").Err().Op("!=").Nil()).Block(
			jen.Id("cerr").Op(":=").Id("ctx").Dot("Err").Call(),
			jen.If(jen.Id("cerr").Op("==").Nil()).Block(
				jen.Comment("The pool saw the deadline pass before the context's timer ran."),
				jen.Id("cerr").Op("=").Qual("context", "DeadlineExceeded"),
			),
			jen.If(jen.Id("s").Dot("at").Op("==").Lit("")).Block(jen.Return(jen.Id("Output").Values(), jen.Id("cerr"))),
			jen.Return(jen.Id("Output").Values(), jen.Qual("fmt", "Errorf").Call(jen.Lit("stopped at %s: %w"), jen.Id("s").Dot("at"), jen.Id("cerr"))),
		)
		g.Return(jen.Id("out"), jen.Err())
	})
	f.Line()

	f.Add(lineComment("Run runs the model on a session from a pool and returns copies of the", "outputs. It is safe for concurrent use. It stops early when ctx ends (see", "Session.RunContext)."))
	f.Func().Params(jen.Id("m").Op("*").Id("Model")).Id("Run").Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("in").Id("Input")).Params(jen.Id("Output"), jen.Error()).BlockFunc(func(g *jen.Group) {
		g.If(jen.Err().Op(":=").Id("ctx").Dot("Err").Call(), jen.Err().Op("!=").Nil()).Block(fail)
		g.Id("s").Op(":=").Id("m").Dot("pool").Dot("Get").Call().Assert(jen.Op("*").Id("Session"))
		g.Defer().Id("m").Dot("pool").Dot("Put").Call(jen.Id("s"))
		g.List(jen.Id("out"), jen.Err()).Op(":=").Id("s").Dot("RunContext").Call(jen.Id("ctx"), jen.Id("in"))
		g.If(jen.Err().Op("!=").Nil()).Block(fail)
		vals := make([]jen.Code, len(c.outputs))
		for i := range c.outputs {
			vals[i] = jen.Id(c.outNames[i]).Op(":").Id("cuvilClone").Call(jen.Id("out").Dot(c.outNames[i]))
		}
		g.Return(jen.Id("Output").Values(vals...), jen.Nil())
	})

	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("gen: rendering model.go: %v", err)
	}
	return buf.Bytes(), nil
}

func (c *compiled) testFile(pkg, header string, dims map[string]int, weightsPath string) ([]byte, error) {
	dimOf := func(d ir.Dim) (int, bool) {
		if d.IsConst() {
			return int(d.Size), true
		}
		if _, ok := c.symIndex[d.Sym]; !ok {
			return -1, false
		}
		if v, ok := dims[d.Sym]; ok {
			return v, true
		}
		return 1, true
	}
	f := jen.NewFile(pkg)
	f.HeaderComment(header)

	inputs := make([]jen.Code, len(c.inputs))
	for i, v := range c.inputs {
		shape := make([]jen.Code, len(v.Type.Shape))
		for j, d := range v.Type.Shape {
			n, _ := dimOf(d)
			shape[j] = jen.Lit(n)
		}
		if k, e, ok := mapGoTypes(v.Type); ok && v.Type.Kind == ir.MapKind {
			inputs[i] = jen.Id(c.inNames[i]).Op(":").Id("NewMap").Call(jen.Map(jen.Id(k)).Id(e).Values())
			continue
		}
		inputs[i] = jen.Id(c.inNames[i]).Op(":").Id("cuvilTestTensor").Call(dtypeID(v.Type.DType), jen.Index().Int().Values(shape...), jen.Lit(i+1))
	}
	f.Add(lineComment("cuvilTestInput is a deterministic pseudo-random input at the declared", "shapes (symbolic dims as given to cuvil, else 1)."))
	f.Func().Id("cuvilTestInput").Params().Id("Input").Block(jen.Return(jen.Id("Input").Values(inputs...)))
	f.Line()

	if c.weightsMode == WeightsFile {
		f.Comment("cuvilTestWeightsPath is the weights file, relative to the package folder.")
		f.Const().Id("cuvilTestWeightsPath").Op("=").Lit(weightsPath)
		f.Line()
		f.Comment("cuvilTestModel loads the model as the tests use it.")
		f.Func().Id("cuvilTestModel").Params().Params(jen.Op("*").Id("Model"), jen.Error()).Block(jen.Return(jen.Id("NewFromFile").Call(jen.Id("cuvilTestWeightsPath"))))
	} else {
		f.Comment("cuvilTestModel loads the model as the tests use it.")
		f.Func().Id("cuvilTestModel").Params().Params(jen.Op("*").Id("Model"), jen.Error()).Block(jen.Return(jen.Id("New").Call()))
	}
	f.Line()

	f.Func().Id("TestRun").Params(jen.Id("t").Op("*").Qual("testing", "T")).BlockFunc(func(g *jen.Group) {
		g.List(jen.Id("m"), jen.Err()).Op(":=").Id("cuvilTestModel").Call()
		g.If(jen.Err().Op("!=").Nil()).Block(jen.Id("t").Dot("Fatal").Call(jen.Err()))
		g.Id("s").Op(":=").Id("m").Dot("NewSession").Call()
		g.Defer().Id("s").Dot("Close").Call()
		g.Id("in").Op(":=").Id("cuvilTestInput").Call()
		g.List(jen.Id("out"), jen.Err()).Op(":=").Id("s").Dot("Run").Call(jen.Id("in"))
		g.If(jen.Err().Op("!=").Nil()).Block(jen.Id("t").Dot("Fatal").Call(jen.Err()))
		for i, v := range c.outputs {
			if !v.Type.Known() {
				continue
			}
			shape := make([]jen.Code, len(v.Type.Shape))
			for j, d := range v.Type.Shape {
				n, _ := dimOf(d)
				shape[j] = jen.Lit(n)
			}
			g.Id("cuvilCheckOutput").Call(jen.Id("t"), jen.Lit(v.Name), jen.Id("out").Dot(c.outNames[i]), dtypeID(v.Type.DType), jen.Index().Int().Values(shape...))
		}
		g.Line()
		g.Comment("The pooled, concurrent API gives the same results.")
		g.List(jen.Id("pooled"), jen.Err()).Op(":=").Id("m").Dot("Run").Call(jen.Qual("context", "Background").Call(), jen.Id("in"))
		g.If(jen.Err().Op("!=").Nil()).Block(jen.Id("t").Dot("Fatal").Call(jen.Err()))
		for i, v := range c.outputs {
			g.If(jen.Op("!").Id("cuvilSameTensor").Call(jen.Id("pooled").Dot(c.outNames[i]), jen.Id("out").Dot(c.outNames[i]))).Block(
				jen.Id("t").Dot("Errorf").Call(jen.Lit(fmt.Sprintf("output %q: Model.Run and Session.Run differ", v.Name))),
			)
		}
		g.Line()
		g.Comment("Steady state: no allocation per run.")
		g.Id("allocs").Op(":=").Qual("testing", "AllocsPerRun").Call(jen.Lit(5), jen.Func().Params().Block(
			jen.If(jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("s").Dot("Run").Call(jen.Id("in")), jen.Err().Op("!=").Nil()).Block(
				jen.Id("t").Dot("Fatal").Call(jen.Err()),
			),
		))
		g.If(jen.Id("allocs").Op("!=").Lit(0)).Block(
			jen.Id("t").Dot("Errorf").Call(jen.Lit("Session.Run allocates %v times per run, want 0"), jen.Id("allocs")),
		)
	})
	f.Line()

	f.Comment("TestProfile: a profiled session times every node of the main graph, within")
	f.Comment("the runs' wall time, and still allocates nothing per run.")
	f.Func().Id("TestProfile").Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
		jen.List(jen.Id("m"), jen.Err()).Op(":=").Id("cuvilTestModel").Call(),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Id("t").Dot("Fatal").Call(jen.Err())),
		jen.Id("s").Op(":=").Id("m").Dot("NewSession").Call(jen.Id("WithProfile").Call()),
		jen.Defer().Id("s").Dot("Close").Call(),
		jen.Id("in").Op(":=").Id("cuvilTestInput").Call(),
		jen.Id("run").Op(":=").Func().Params().Block(
			jen.If(jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("s").Dot("Run").Call(jen.Id("in")), jen.Err().Op("!=").Nil()).Block(
				jen.Id("t").Dot("Fatal").Call(jen.Err()),
			),
		),
		jen.Id("run").Call(),
		jen.Id("s").Dot("ResetProfile").Call(),
		jen.Id("start").Op(":=").Qual("time", "Now").Call(),
		jen.Id("run").Call(),
		jen.Id("run").Call(),
		jen.Id("wall").Op(":=").Qual("time", "Since").Call(jen.Id("start")),
		jen.Id("cuvilCheckProfile").Call(jen.Id("t"), jen.Id("s").Dot("Profile").Call(), jen.Id("cuvilProfNodes").Index(jen.Op(":")), jen.Lit(2), jen.Id("wall")),
		jen.If(jen.Id("allocs").Op(":=").Qual("testing", "AllocsPerRun").Call(jen.Lit(5), jen.Id("run")), jen.Id("allocs").Op("!=").Lit(0)).Block(
			jen.Id("t").Dot("Errorf").Call(jen.Lit("profiled Session.Run allocates %v times per run, want 0"), jen.Id("allocs")),
		),
		jen.If(jen.Id("m").Dot("NewSession").Call().Dot("Profile").Call().Op("!=").Nil()).Block(
			jen.Id("t").Dot("Error").Call(jen.Lit("a session without WithProfile has a profile")),
		),
	)
	f.Line()

	f.Comment("TestTrace: a traced session's trace is Chrome trace event JSON with every")
	f.Comment("slice closed, one slice per main-graph node per run inside the runs' wall")
	f.Comment("time, and the pool's parts on threads of their own; its profile still works,")
	f.Comment("and a session without WithTrace has no trace.")
	f.Func().Id("TestTrace").Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
		jen.List(jen.Id("m"), jen.Err()).Op(":=").Id("cuvilTestModel").Call(),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Id("t").Dot("Fatal").Call(jen.Err())),
		jen.Id("s").Op(":=").Id("m").Dot("NewSession").Call(jen.Id("WithTrace").Call(), jen.Id("WithThreads").Call(jen.Lit(2))),
		jen.Defer().Id("s").Dot("Close").Call(),
		jen.Id("in").Op(":=").Id("cuvilTestInput").Call(),
		jen.Id("run").Op(":=").Func().Params().Block(
			jen.If(jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("s").Dot("Run").Call(jen.Id("in")), jen.Err().Op("!=").Nil()).Block(
				jen.Id("t").Dot("Fatal").Call(jen.Err()),
			),
		),
		jen.Id("run").Call(),
		jen.Id("s").Dot("ResetProfile").Call(),
		jen.Id("start").Op(":=").Qual("time", "Now").Call(),
		jen.Id("run").Call(),
		jen.Id("run").Call(),
		jen.Id("wall").Op(":=").Qual("time", "Since").Call(jen.Id("start")),
		jen.Var().Id("buf").Qual("bytes", "Buffer"),
		jen.If(jen.Err().Op(":=").Id("s").Dot("WriteTrace").Call(jen.Op("&").Id("buf")), jen.Err().Op("!=").Nil()).Block(jen.Id("t").Dot("Fatal").Call(jen.Err())),
		jen.Id("cuvilCheckTrace").Call(jen.Id("t"), jen.Id("buf").Dot("Bytes").Call(), jen.Id("cuvilProfNodes").Index(jen.Op(":")), jen.Lit(2), jen.Id("wall")),
		jen.Id("cuvilCheckProfile").Call(jen.Id("t"), jen.Id("s").Dot("Profile").Call(), jen.Id("cuvilProfNodes").Index(jen.Op(":")), jen.Lit(2), jen.Id("wall")),
		jen.If(jen.Id("m").Dot("NewSession").Call().Dot("WriteTrace").Call(jen.Op("&").Id("buf")).Op("==").Nil()).Block(
			jen.Id("t").Dot("Error").Call(jen.Lit("a session without WithTrace writes a trace")),
		),
	)
	f.Line()

	f.Comment("TestRunContext: an ended context stops the run with its error; a run")
	f.Comment("cancelled after its first node stops there; the session then runs again")
	f.Comment("to the same results.")
	f.Func().Id("TestRunContext").Params(jen.Id("t").Op("*").Qual("testing", "T")).BlockFunc(func(g *jen.Group) {
		fatal := jen.Id("t").Dot("Fatal").Call(jen.Err())
		g.List(jen.Id("m"), jen.Err()).Op(":=").Id("cuvilTestModel").Call()
		g.If(jen.Err().Op("!=").Nil()).Block(fatal)
		g.Id("s").Op(":=").Id("m").Dot("NewSession").Call()
		g.Defer().Id("s").Dot("Close").Call()
		g.Id("in").Op(":=").Id("cuvilTestInput").Call()
		g.List(jen.Id("want"), jen.Err()).Op(":=").Id("m").Dot("Run").Call(jen.Qual("context", "Background").Call(), jen.Id("in"))
		g.If(jen.Err().Op("!=").Nil()).Block(fatal)
		g.List(jen.Id("ctx"), jen.Id("cancel")).Op(":=").Qual("context", "WithCancel").Call(jen.Qual("context", "Background").Call())
		g.Id("cancel").Call()
		g.If(jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("s").Dot("RunContext").Call(jen.Id("ctx"), jen.Id("in")), jen.Op("!").Qual("errors", "Is").Call(jen.Err(), jen.Qual("context", "Canceled"))).Block(
			jen.Id("t").Dot("Fatalf").Call(jen.Lit("RunContext with an ended context: %v, want context.Canceled"), jen.Err()),
		)
		if len(c.run) > 1 {
			g.Id("id").Op(":=").Id("s").Dot("pool").Dot("BeginRun").Call(jen.Qual("time", "Time").Values())
			g.Id("s").Dot("pool").Dot("Cancel").Call(jen.Id("id"))
			g.List(jen.Id("_"), jen.Err()).Op("=").Id("s").Dot("Run").Call(jen.Id("in"))
			g.If(jen.Op("!").Id("s").Dot("pool").Dot("EndRun").Call(jen.Id("id")).Op("||").Op("!").Qual("errors", "Is").Call(jen.Err(), jen.Id("errCancelled"))).Block(
				jen.Id("t").Dot("Fatalf").Call(jen.Lit("a cancelled run: %v, want errCancelled"), jen.Err()),
			)
			first := c.run[0]
			g.If(jen.Id("s").Dot("at").Op("!=").Lit(fmt.Sprintf("node %q (%s)", first.Name, first.Op))).Block(
				jen.Id("t").Dot("Errorf").Call(jen.Lit("a run cancelled before its first node ended at %s"), jen.Id("s").Dot("at")),
			)
		}
		g.List(jen.Id("live"), jen.Id("stop")).Op(":=").Qual("context", "WithCancel").Call(jen.Qual("context", "Background").Call())
		g.Defer().Id("stop").Call()
		g.List(jen.Id("out"), jen.Err()).Op(":=").Id("s").Dot("RunContext").Call(jen.Id("live"), jen.Id("in"))
		g.If(jen.Err().Op("!=").Nil()).Block(fatal)
		for i, v := range c.outputs {
			g.If(jen.Op("!").Id("cuvilSameTensor").Call(jen.Id("out").Dot(c.outNames[i]), jen.Id("want").Dot(c.outNames[i]))).Block(
				jen.Id("t").Dot("Errorf").Call(jen.Lit(fmt.Sprintf("output %q: RunContext after a cancelled run differs from Model.Run", v.Name))),
			)
		}
	})
	f.Line()

	f.Comment("TestWeightsInPlace: runs on sessions of 1 and 3 threads leave the weights as")
	f.Comment("they were loaded (they are read-only memory: a kernel writing one would")
	f.Comment("fault), and the numeric ones are views of the blob, not copies.")
	f.Func().Id("TestWeightsInPlace").Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
		jen.List(jen.Id("m"), jen.Err()).Op(":=").Id("cuvilTestModel").Call(),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Id("t").Dot("Fatal").Call(jen.Err())),
		jen.Id("in").Op(":=").Id("cuvilTestInput").Call(),
		jen.For(jen.List(jen.Id("_"), jen.Id("threads")).Op(":=").Range().Index().Int().Values(jen.Lit(1), jen.Lit(3))).Block(
			jen.Id("s").Op(":=").Id("m").Dot("NewSession").Call(jen.Id("WithThreads").Call(jen.Id("threads"))),
			jen.For(jen.Id("i").Op(":=").Lit(0), jen.Id("i").Op("<").Lit(2), jen.Id("i").Op("++")).Block(
				jen.If(jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("s").Dot("Run").Call(jen.Id("in")), jen.Err().Op("!=").Nil()).Block(jen.Id("t").Dot("Fatal").Call(jen.Err())),
			),
			jen.Id("s").Dot("Close").Call(),
		),
		jen.Id("cuvilCheckWeights").Call(jen.Id("t"), jen.Id("m").Dot("weights"), jen.Id("cuvilWeightsCRC"), jen.Id("cuvilConsts").Index(jen.Op(":")), jen.Id("m").Dot("consts").Index(jen.Op(":"))),
	)
	f.Line()

	if c.weightsMode == WeightsFile {
		fatal := jen.Id("t").Dot("Fatal").Call(jen.Err())
		f.Comment("TestWeightsFile: New refuses, NewFromFile and NewFromReader load the weights")
		f.Comment("file to the same results and refuse a missing, truncated, longer or corrupted one.")
		f.Func().Id("TestWeightsFile").Params(jen.Id("t").Op("*").Qual("testing", "T")).BlockFunc(func(g *jen.Group) {
			g.If(jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("New").Call(), jen.Err().Op("==").Nil().Op("||").Op("!").Qual("strings", "Contains").Call(jen.Err().Dot("Error").Call(), jen.Lit("NewFromFile"))).Block(
				jen.Id("t").Dot("Errorf").Call(jen.Lit("New: %v, want an error naming NewFromFile"), jen.Err()),
			)
			g.Id("cuvilCheckWeightsFile").Call(jen.Id("t"), jen.Id("cuvilTestWeightsPath"), jen.Id("cuvilWeightsSize"),
				jen.Func().Params(jen.Id("path").String()).Error().Block(jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("NewFromFile").Call(jen.Id("path")), jen.Return(jen.Err())),
				jen.Func().Params(jen.Id("r").Qual("io", "ReaderAt"), jen.Id("size").Int64()).Error().Block(jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("NewFromReader").Call(jen.Id("r"), jen.Id("size")), jen.Return(jen.Err())),
			)
			g.List(jen.Id("data"), jen.Err()).Op(":=").Qual("os", "ReadFile").Call(jen.Id("cuvilTestWeightsPath"))
			g.If(jen.Err().Op("!=").Nil()).Block(fatal)
			g.List(jen.Id("a"), jen.Err()).Op(":=").Id("NewFromFile").Call(jen.Id("cuvilTestWeightsPath"))
			g.If(jen.Err().Op("!=").Nil()).Block(fatal)
			g.List(jen.Id("b"), jen.Err()).Op(":=").Id("NewFromReader").Call(jen.Qual("bytes", "NewReader").Call(jen.Id("data")), jen.Int64().Call(jen.Len(jen.Id("data"))))
			g.If(jen.Err().Op("!=").Nil()).Block(fatal)
			g.Id("in").Op(":=").Id("cuvilTestInput").Call()
			g.List(jen.Id("want"), jen.Err()).Op(":=").Id("a").Dot("Run").Call(jen.Qual("context", "Background").Call(), jen.Id("in"))
			g.If(jen.Err().Op("!=").Nil()).Block(fatal)
			g.List(jen.Id("got"), jen.Err()).Op(":=").Id("b").Dot("Run").Call(jen.Qual("context", "Background").Call(), jen.Id("in"))
			g.If(jen.Err().Op("!=").Nil()).Block(fatal)
			for i, v := range c.outputs {
				g.If(jen.Op("!").Id("cuvilSameTensor").Call(jen.Id("got").Dot(c.outNames[i]), jen.Id("want").Dot(c.outNames[i]))).Block(
					jen.Id("t").Dot("Errorf").Call(jen.Lit(fmt.Sprintf("output %q: NewFromReader's model and NewFromFile's differ", v.Name))),
				)
			}
		})
		f.Line()
	}

	if len(c.inputs) > 0 {
		v := c.inputs[0]
		wrong := ir.F32
		if v.Type.DType == ir.F32 {
			wrong = ir.I64
		}
		f.Func().Id("TestGuard").Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
			jen.List(jen.Id("m"), jen.Err()).Op(":=").Id("cuvilTestModel").Call(),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Id("t").Dot("Fatal").Call(jen.Err())),
			jen.Id("in").Op(":=").Id("cuvilTestInput").Call(),
			jen.Id("in").Dot(c.inNames[0]).Op("=").Id("cuvilTestTensor").Call(dtypeID(wrong), jen.Id("in").Dot(c.inNames[0]).Dot("Shape"), jen.Lit(1)),
			jen.List(jen.Id("_"), jen.Err()).Op("=").Id("m").Dot("NewSession").Call().Dot("Run").Call(jen.Id("in")),
			jen.If(jen.Err().Op("==").Nil().Op("||").Op("!").Qual("strings", "Contains").Call(jen.Err().Dot("Error").Call(), jen.Lit(strconv.Quote(v.Name)))).Block(
				jen.Id("t").Dot("Errorf").Call(jen.Lit("wrong dtype: got error %v, want one naming input %q"), jen.Err(), jen.Lit(v.Name)),
			),
		)
	}

	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("gen: rendering model_test.go: %v", err)
	}
	return buf.Bytes(), nil
}

// mapGoTypes returns the Go key and value types of a map type, or of the
// maps of a sequence of maps, when the generated API exchanges them
// (templates' MapKey and MapElem).
func mapGoTypes(t ir.Type) (key, val string, ok bool) {
	if t.Kind == ir.SequenceKind && t.Elem != nil {
		t = *t.Elem
	}
	if t.Kind != ir.MapKind || t.Elem == nil || t.Elem.Kind != ir.TensorKind {
		return "", "", false
	}
	goType := map[ir.DType]string{ir.I64: "int64", ir.String: "string", ir.F32: "float32", ir.F64: "float64"}
	key, val = goType[t.DType], goType[t.Elem.DType]
	if key == "" || t.DType == ir.F32 || t.DType == ir.F64 || val == "" {
		return "", "", false
	}
	return key, val, true
}

// mapHint tells, in the Input and Output docs, how to make or read a map
// or a sequence of maps as Go maps.
func mapHint(t ir.Type, input bool) string {
	k, v, ok := mapGoTypes(t)
	switch {
	case !ok:
		return ""
	case t.Kind == ir.MapKind && input:
		return fmt.Sprintf(" Make it with NewMap(map[%s]%s{...}).", k, v)
	case t.Kind == ir.MapKind:
		return fmt.Sprintf(" Read it with MapOf[%s, %s].", k, v)
	case input:
		return fmt.Sprintf(" Make it with NewSequence(%s, NewMap(map[%s]%s{...}), ...).", v2dtype(v), k, v)
	}
	return fmt.Sprintf(" Read it with MapsOf[%s, %s] ([]map[%s]%s).", k, v, k, v)
}

func v2dtype(goType string) string {
	return map[string]string{"int64": "I64", "string": "String", "float32": "F32", "float64": "F64"}[goType]
}
