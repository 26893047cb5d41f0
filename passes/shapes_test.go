package passes

import (
	"testing"

	"github.com/cuvil/cuvil/ir"
)

func TestShapes(t *testing.T) {
	tests := []struct {
		name  string
		opset int64
		build func(b *builder) *ir.Value // returns the value to check
		want  string                     // its type, or
		err   []string                   // fragments of the error
	}{
		{"broadcast symbol against 1 and N", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, "N", 1, "S", 5)
			y := b.input("y", ir.F32, 3, 1, 5)
			return b.out("Add", "add", []*ir.Value{x, y})
		}, "f32[N,3,S,5]", nil},
		{"broadcast same symbol", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, "B", "S")
			y := b.input("y", ir.F32, "S")
			return b.out("Mul", "mul", []*ir.Value{x, y})
		}, "f32[B,S]", nil},
		{"broadcast mismatch", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 2, 3)
			y := b.input("y", ir.F32, 4)
			return b.out("Add", "bad_add", []*ir.Value{x, y})
		}, "", []string{`node "bad_add" (Add)`, "do not broadcast"}},
		{"comparison gives bool", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.I64, "N")
			y := b.input("y", ir.I64, 1)
			return b.out("Less", "lt", []*ir.Value{x, y})
		}, "bool[N]", nil},
		{"where takes X's dtype", 17, func(b *builder) *ir.Value {
			c := b.input("c", ir.Bool, 1, "S")
			x := b.input("x", ir.F16, "B", 1)
			y := b.input("y", ir.F16, 1)
			return b.out("Where", "w", []*ir.Value{c, x, y})
		}, "f16[B,S]", nil},
		{"cast", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, "N", 3)
			return b.out("Cast", "c", []*ir.Value{x}, aInt("to", int64(ir.I8)))
		}, "i8[N,3]", nil},
		{"conv pads strides dilations", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, "N", 3, 224, 224)
			w := b.input("w", ir.F32, 64, 3, 7, 7)
			return b.out("Conv", "conv", []*ir.Value{x, w}, aInts("pads", 3, 3, 3, 3), aInts("strides", 2, 2), aInts("dilations", 1, 1))
		}, "f32[N,64,112,112]", nil},
		{"conv dilated valid", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 1, 8, 20, 17)
			w := b.input("w", ir.F32, 4, 4, 3, 3)
			return b.out("Conv", "conv", []*ir.Value{x, w}, aInts("dilations", 2, 3), aInt("group", 2))
		}, "f32[1,4,16,11]", nil},
		{"conv same_upper stride 2", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 1, 3, 15, 16)
			w := b.input("w", ir.F32, 8, 3, 3, 3)
			return b.out("Conv", "conv", []*ir.Value{x, w}, aStr("auto_pad", "SAME_UPPER"), aInts("strides", 2, 2))
		}, "f32[1,8,8,8]", nil},
		{"conv symbolic spatial same", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 1, 3, "H", "W")
			w := b.input("w", ir.F32, 8, 3, 3, 3)
			return b.out("Conv", "conv", []*ir.Value{x, w}, aInts("pads", 1, 1, 1, 1))
		}, "f32[1,8,H,W]", nil},
		{"conv channel mismatch", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 1, 4, 8, 8)
			w := b.input("w", ir.F32, 8, 3, 3, 3)
			return b.out("Conv", "Conv_3", []*ir.Value{x, w})
		}, "", []string{`node "Conv_3" (Conv)`, "4 channels"}},
		{"conv transpose", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 1, 8, 10, 10)
			w := b.input("w", ir.F32, 8, 4, 3, 3)
			return b.out("ConvTranspose", "ct", []*ir.Value{x, w}, aInts("strides", 2, 2), aInts("pads", 1, 1, 1, 1), aInts("output_padding", 1, 1))
		}, "f32[1,4,20,20]", nil},
		{"maxpool ceil mode", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 1, 64, 112, 112)
			return b.out("MaxPool", "pool", []*ir.Value{x}, aInts("kernel_shape", 3, 3), aInts("strides", 2, 2), aInt("ceil_mode", 1))
		}, "f32[1,64,56,56]", nil},
		{"avgpool ceil mode drops window in padding", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 1, 1, 5, 5)
			return b.out("AveragePool", "pool", []*ir.Value{x}, aInts("kernel_shape", 2, 2), aInts("strides", 2, 2), aInts("pads", 1, 1, 1, 1), aInt("ceil_mode", 1))
		}, "f32[1,1,3,3]", nil},
		{"global pool", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, "N", 1280, 7, 7)
			return b.out("GlobalAveragePool", "gap", []*ir.Value{x})
		}, "f32[N,1280,1,1]", nil},
		{"gemm transposed", 17, func(b *builder) *ir.Value {
			a := b.input("a", ir.F32, "N", 512)
			w := b.input("w", ir.F32, 10, 512)
			c := b.input("c", ir.F32, 10)
			return b.out("Gemm", "gemm", []*ir.Value{a, w, c}, aInt("transB", 1))
		}, "f32[N,10]", nil},
		{"matmul batched broadcast", 17, func(b *builder) *ir.Value {
			a := b.input("a", ir.F32, "B", 1, "S", 64)
			w := b.input("w", ir.F32, 4, 64, "T")
			return b.out("MatMul", "mm", []*ir.Value{a, w})
		}, "f32[B,4,S,T]", nil},
		{"matmul vector", 17, func(b *builder) *ir.Value {
			a := b.input("a", ir.F32, 64)
			w := b.input("w", ir.F32, 3, 64, 5)
			return b.out("MatMul", "mm", []*ir.Value{a, w})
		}, "f32[3,5]", nil},
		{"matmul inner mismatch", 17, func(b *builder) *ir.Value {
			a := b.input("a", ir.F32, 2, 3)
			w := b.input("w", ir.F32, 4, 5)
			return b.out("MatMul", "mm", []*ir.Value{a, w})
		}, "", []string{`node "mm" (MatMul)`, "inner dims"}},
		{"reduce axes input keepdims", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, "B", "S", 256)
			return b.out("ReduceSum", "r", []*ir.Value{x, b.ints("axes", -1)})
		}, "f32[B,S,1]", nil},
		{"reduce axes attribute no keepdims", 13, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, "B", "S", 256)
			return b.out("ReduceMean", "r", []*ir.Value{x}, aInts("axes", 1), aInt("keepdims", 0))
		}, "f32[B,256]", nil},
		{"argmax", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, "B", 10)
			return b.out("ArgMax", "am", []*ir.Value{x}, aInt("axis", 1), aInt("keepdims", 0))
		}, "i64[B]", nil},
		{"layernorm stats", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F16, "B", "S", 256)
			s := b.input("s", ir.F16, 256)
			return b.node("LayerNormalization", "ln", []*ir.Value{x, s}, 3).Outputs[1]
		}, "f32[B,S,1]", nil},
		{"reshape 0 and -1 with symbols", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, "B", "S", 256)
			return b.out("Reshape", "r", []*ir.Value{x, b.ints("shape", 0, -1, 4, 64)})
		}, "f32[B,S,4,64]", nil},
		{"reshape -1 cancels symbols", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, "B", 4, "S", 64)
			return b.out("Reshape", "r", []*ir.Value{x, b.ints("shape", 0, 256, -1)})
		}, "f32[B,256,S]", nil},
		{"reshape -1 keeps a product symbol", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, "B", "S", 256)
			return b.out("Reshape", "r", []*ir.Value{x, b.ints("shape", -1, 256)})
		}, "f32[r_d1,256]", nil},
		{"reshape bad count", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 2, 3)
			return b.out("Reshape", "r", []*ir.Value{x, b.ints("shape", 4, -1)})
		}, "", []string{`node "r" (Reshape)`, "cannot reshape"}},
		{"reshape from shape arithmetic", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 1, "seq", 256)
			s := b.out("Shape", "shape", []*ir.Value{x})
			seq := b.out("Gather", "seq", []*ir.Value{s, b.scalar("one", 1)})
			u := b.out("Unsqueeze", "u", []*ir.Value{seq, b.ints("zero", 0)})
			c := b.out("Concat", "cat", []*ir.Value{u, b.ints("heads", 4, 64)}, aInt("axis", 0))
			return b.out("Reshape", "r", []*ir.Value{x, c})
		}, "f32[seq,4,64]", nil},
		{"flatten symbolic", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, "N", 64, 1, 1)
			return b.out("Flatten", "f", []*ir.Value{x})
		}, "f32[N,64]", nil},
		{"transpose default perm", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, "A", 2, 3)
			return b.out("Transpose", "t", []*ir.Value{x})
		}, "f32[3,2,A]", nil},
		{"concat symbolic axis", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, "N", "S", 3)
			y := b.input("y", ir.F32, "N", 0, 3)
			return b.out("Concat", "c", []*ir.Value{x, y}, aInt("axis", 1))
		}, "f32[N,S,3]", nil},
		{"split attribute (opset 11)", 11, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 2, 10)
			return b.node("Split", "sp", []*ir.Value{x}, 2, aInt("axis", 1), aInts("split", 3, 7)).Outputs[1]
		}, "f32[2,7]", nil},
		{"split equal (opset 13)", 13, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 2, 12)
			return b.node("Split", "sp", []*ir.Value{x}, 3, aInt("axis", -1)).Outputs[2]
		}, "f32[2,4]", nil},
		{"slice to a run-time length", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.I64, 1, "seq")
			pos := b.constant("pos", ir.NewTensorInt64([]int64{1, 512}, make([]int64, 512)))
			s := b.out("Shape", "shape", []*ir.Value{x})
			seq := b.out("Gather", "seq", []*ir.Value{s, b.ints("one", 1)})
			return b.out("Slice", "sl", []*ir.Value{pos, b.ints("z", 0), seq, b.ints("ax", 1), b.ints("st", 1)})
		}, "i64[1,seq]", nil},
		{"slice negative step and clamping", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 10, 20)
			return b.out("Slice", "sl", []*ir.Value{x, b.ints("s", -1, 2), b.ints("e", -100, 1000), b.ints("a", 0, 1), b.ints("st", -3, 5)})
		}, "f32[4,4]", nil},
		{"slice attributes (opset 9)", 9, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 10, "S")
			return b.out("Slice", "sl", []*ir.Value{x}, aInts("starts", 2), aInts("ends", 5), aInts("axes", 0))
		}, "f32[3,S]", nil},
		{"squeeze attribute (opset 11)", 11, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 1, "S", 1)
			return b.out("Squeeze", "sq", []*ir.Value{x}, aInts("axes", -1))
		}, "f32[1,S]", nil},
		{"squeeze non-1 axis", 13, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 1, 3)
			return b.out("Squeeze", "sq", []*ir.Value{x, b.ints("axes", 1)})
		}, "", []string{`node "sq" (Squeeze)`, "cannot squeeze"}},
		{"unsqueeze input (opset 13)", 13, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, "S", 4)
			return b.out("Unsqueeze", "u", []*ir.Value{x, b.ints("axes", 0, -1)})
		}, "f32[1,S,4,1]", nil},
		{"gather", 17, func(b *builder) *ir.Value {
			emb := b.input("emb", ir.F32, 30522, 256)
			ids := b.input("ids", ir.I64, 1, "seq")
			return b.out("Gather", "g", []*ir.Value{emb, ids})
		}, "f32[1,seq,256]", nil},
		{"shape start end (opset 15)", 15, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 1, 2, 3, 4)
			return b.out("Shape", "s", []*ir.Value{x}, aInt("start", 1), aInt("end", -1))
		}, "i64[2]", nil},
		{"constant of shape from shape", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, "N", 7)
			s := b.out("Shape", "s", []*ir.Value{x})
			return b.out("ConstantOfShape", "c", []*ir.Value{s}, aTensor("value", ir.NewTensorInt64([]int64{1}, []int64{0})))
		}, "i64[N,7]", nil},
		{"expand bidirectional", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 3, 1)
			return b.out("Expand", "e", []*ir.Value{x, b.ints("s", 2, 1, 6)})
		}, "f32[2,3,6]", nil},
		{"tile", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, "S", 3)
			return b.out("Tile", "t", []*ir.Value{x, b.ints("r", 1, 4)})
		}, "f32[S,12]", nil},
		{"pad input (opset 13)", 13, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 1, 3, 4, 4)
			return b.out("Pad", "p", []*ir.Value{x, b.ints("pads", 0, 0, 1, 2, 0, 0, 3, 4)})
		}, "f32[1,3,8,10]", nil},
		{"pad attribute (opset 2)", 7, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 2, 2)
			return b.out("Pad", "p", []*ir.Value{x}, aInts("pads", 1, 0, 1, 0))
		}, "f32[4,2]", nil},
		{"range", 17, func(b *builder) *ir.Value {
			return b.out("Range", "r", []*ir.Value{b.scalar("a", 2), b.scalar("l", 11), b.scalar("d", 3)})
		}, "i64[3]", nil},
		{"nonzero gets a named symbol", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 3, 4)
			return b.out("NonZero", "nz/1", []*ir.Value{x})
		}, "i64[2,nz_1_d1]", nil},
		{"topk from input", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, "B", 100)
			return b.node("TopK", "tk", []*ir.Value{x, b.ints("k", 5)}, 2).Outputs[1]
		}, "i64[B,5]", nil},
		{"lstm bidirectional", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, "T", 2, 32)
			w := b.input("w", ir.F32, 2, 256, 32)
			r := b.input("r", ir.F32, 2, 256, 64)
			return b.node("LSTM", "lstm", []*ir.Value{x, w, r}, 3, aStr("direction", "bidirectional"), aInt("hidden_size", 64)).Outputs[0]
		}, "f32[T,2,2,64]", nil},
		{"gru batch-first hidden from W", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 4, "T", 16)
			w := b.input("w", ir.F32, 1, 24, 16)
			r := b.input("r", ir.F32, 1, 24, 8)
			return b.node("GRU", "gru", []*ir.Value{x, w, r}, 2, aInt("layout", 1)).Outputs[1]
		}, "f32[4,1,8]", nil},
		{"resize scales", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 1, 3, 10, 15)
			sc := b.constant("sc", ir.NewTensorF32([]int64{4}, []float32{1, 1, 2, 0.5}))
			return b.out("Resize", "rs", []*ir.Value{x, nil, sc}, aStr("mode", "nearest"))
		}, "f32[1,3,20,7]", nil},
		{"einsum", 17, func(b *builder) *ir.Value {
			a := b.input("a", ir.F32, "B", 4, 8)
			c := b.input("c", ir.F32, "B", 8, 5)
			return b.out("Einsum", "es", []*ir.Value{a, c}, aStr("equation", "bij,bjk->bik"))
		}, "f32[B,4,5]", nil},
		{"depth to space", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 1, 16, 3, 5)
			return b.out("DepthToSpace", "d2s", []*ir.Value{x}, aInt("blocksize", 2))
		}, "f32[1,4,6,10]", nil},
		{"unknown op without declared type", 17, func(b *builder) *ir.Value {
			x := b.input("x", ir.F32, 1)
			n := b.node("Frobnicate", "fz", []*ir.Value{x}, 1)
			n.Domain = "com.example"
			return n.Outputs[0]
		}, "", []string{`node "fz" (Frobnicate)`, "no shape inference", "declares no type"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newBuilder(t, tc.opset)
			v := b.build(tc.build)
			_, err := InferShapes(b.m)
			if tc.err != nil {
				wantErr(t, err, tc.err...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := v.Type.String(); got != tc.want {
				t.Errorf("type %s, want %s", got, tc.want)
			}
			if err := ir.Verify(b.m); err != nil {
				t.Errorf("verify: %v", err)
			}
		})
	}
}

// build runs f and makes its result the graph output.
func (b *builder) build(f func(*builder) *ir.Value) *ir.Value {
	v := f(b)
	b.g.Outputs = []*ir.Value{v}
	return v
}

// Declared types are hints: inference wins where it knows, the declaration
// fills in where it does not.
func TestShapesDeclaredTypesAreHints(t *testing.T) {
	b := newBuilder(t, 17)
	x := b.input("x", ir.F32, 1, "seq", 256)
	y := b.out("Relu", "relu", []*ir.Value{x})
	y.Type = ir.TensorType(ir.F32, shape(1, "seq", "made_up_dim")) // a made-up declared dim
	nz := b.out("NonZero", "nz", []*ir.Value{x})
	nz.Type = ir.TensorType(ir.I64, shape(3, 7)) // declared count for a data-dependent dim
	b.g.Outputs = []*ir.Value{y, nz}
	if _, err := InferShapes(b.m); err != nil {
		t.Fatal(err)
	}
	if got := y.Type.String(); got != "f32[1,seq,256]" {
		t.Errorf("relu: %s, want the inferred f32[1,seq,256]", got)
	}
	if got := nz.Type.String(); got != "i64[3,7]" {
		t.Errorf("nonzero: %s, want the declared count filling in: i64[3,7]", got)
	}
}

// Fresh symbols are deterministic: a second run gives the same names.
func TestShapesDeterministicSymbols(t *testing.T) {
	b := newBuilder(t, 17)
	x := b.input("x", ir.F32, "B", "S", 8)
	r := b.out("Reshape", "r", []*ir.Value{x, b.ints("s", -1, 8)})
	f := b.out("Flatten", "f", []*ir.Value{x}, aInt("axis", 2))
	b.g.Outputs = []*ir.Value{r, f}
	if _, err := InferShapes(b.m); err != nil {
		t.Fatal(err)
	}
	first := r.Type.String() + f.Type.String()
	if _, err := InferShapes(b.m); err != nil {
		t.Fatal(err)
	}
	if again := r.Type.String() + f.Type.String(); again != first {
		t.Errorf("second run %s, first %s", again, first)
	}
	// B*S is one product: Reshape and Flatten must share its symbol.
	if r.Type.Shape[0] != f.Type.Shape[0] {
		t.Errorf("reshape %s and flatten %s name the same product differently", r.Type, f.Type)
	}
}

func TestShapesIf(t *testing.T) {
	b := newBuilder(t, 17)
	c := b.input("c", ir.Bool)
	x := b.input("x", ir.F32, "N", 4)
	then := &ir.Graph{Name: "then", Parent: b.g}
	tv := b.nodeIn(then, "Relu", "t_relu", []*ir.Value{x}, 1).Outputs[0]
	then.Outputs = []*ir.Value{tv}
	els := &ir.Graph{Name: "else", Parent: b.g}
	ev := b.nodeIn(els, "Transpose", "e_tr", []*ir.Value{x}, 1, aInts("perm", 0, 1)).Outputs[0]
	ev2 := b.nodeIn(els, "Concat", "e_cat", []*ir.Value{ev, ev}, 1, aInt("axis", 1)).Outputs[0]
	els.Outputs = []*ir.Value{ev2}
	out := b.out("If", "if", []*ir.Value{c}, aGraph("then_branch", then), aGraph("else_branch", els))
	b.g.Outputs = []*ir.Value{out}
	if _, err := InferShapes(b.m); err != nil {
		t.Fatal(err)
	}
	if got := ev2.Type.String(); got != "f32[N,8]" {
		t.Errorf("else branch: %s", got)
	}
	if got := out.Type.String(); got != "f32[N,if_d1]" {
		t.Errorf("if: %s, want f32[N,if_d1] (4 vs 8 merge to a fresh dim)", got)
	}
	if err := ir.Verify(b.m); err != nil {
		t.Error(err)
	}
}

func TestShapesLoop(t *testing.T) {
	b := newBuilder(t, 17)
	x := b.input("x", ir.F32, 3)
	body := &ir.Graph{Name: "body", Parent: b.g}
	iter := &ir.Value{Name: "i", Type: ir.Type{Unranked: true}}
	cond := &ir.Value{Name: "cond_in", Type: ir.Type{Unranked: true}}
	acc := &ir.Value{Name: "acc", Type: ir.Type{Unranked: true}}
	body.Inputs = []*ir.Value{iter, cond, acc}
	next := b.nodeIn(body, "Add", "b_add", []*ir.Value{acc, x}, 1).Outputs[0]
	cout := b.nodeIn(body, "Identity", "b_cond", []*ir.Value{cond}, 1).Outputs[0]
	scan := b.nodeIn(body, "Mul", "b_mul", []*ir.Value{acc, acc}, 1).Outputs[0]
	body.Outputs = []*ir.Value{cout, next, scan}
	m := b.scalar("M", 5)
	n := b.node("Loop", "loop", []*ir.Value{m, nil, x}, 2, aGraph("body", body))
	b.g.Outputs = n.Outputs
	if _, err := InferShapes(b.m); err != nil {
		t.Fatal(err)
	}
	if got := n.Outputs[0].Type.String(); got != "f32[3]" {
		t.Errorf("carried: %s", got)
	}
	if got := n.Outputs[1].Type.String(); got != "f32[5,3]" {
		t.Errorf("scan output: %s, want f32[5,3] (M=5, no condition)", got)
	}
	if got := iter.Type.String(); got != "i64[]" {
		t.Errorf("iteration input: %s", got)
	}
}
