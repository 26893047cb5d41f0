// Package halfmodel converts an fp32 ONNX model into an all-fp16 one, the
// way onnxconverter-common's float16.convert_float_to_float16 does with
// keep_io_types=True: float initializers, Constant and ConstantOfShape
// values and every float value become FLOAT16, each float graph input gets
// a Cast(to=FLOAT16) after it and each float graph output a Cast(to=FLOAT)
// before it, so the model's interface stays float32. Ops that must stay
// float (the converter's default block list) are wrapped in Casts, and the
// inputs ONNX requires to be float (Resize's scales) are left float. It is
// a test helper: the tests compile the converted model with Cuvil and run
// it on ONNX Runtime.
package halfmodel

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/passes"
)

// blockList is onnxconverter-common's DEFAULT_OP_BLOCK_LIST: ops computed
// in float32, with Casts around them.
var blockList = map[string]bool{
	"ArrayFeatureExtractor": true, "Binarizer": true, "CastMap": true, "CategoryMapper": true,
	"DictVectorizer": true, "FeatureVectorizer": true, "Imputer": true, "LabelEncoder": true,
	"LinearClassifier": true, "LinearRegressor": true, "Normalizer": true, "OneHotEncoder": true,
	"RandomUniformLike": true, "SVMClassifier": true, "SVMRegressor": true, "Scaler": true,
	"TreeEnsembleClassifier": true, "TreeEnsembleRegressor": true, "ZipMap": true,
	"NonMaxSuppression": true, "TopK": true, "RoiAlign": true, "Range": true, "CumSum": true,
	"Min": true, "Max": true, "Upsample": true,
}

// floatInputs are the inputs that stay float32 (the converter's
// ALWAYS_FLOAT_INPUTS).
var floatInputs = map[string][]int{"Resize": {2}, "GroupNorm": {0, 1, 2}, "SkipGroupNorm": {0, 1, 2}}

// Convert rewrites m (its main graph; subgraphs are not supported) into the
// all-fp16 model. It runs shape inference first to learn every value's
// dtype.
func Convert(m *ir.Model) error {
	if _, err := passes.InferShapes(m); err != nil {
		return fmt.Errorf("halfmodel: %v", err)
	}
	g := m.Graph
	castV := 13
	if s := ir.LookupOp("", "Cast"); s != nil {
		if v, ok := s.VersionFor(m.Opset("")); ok {
			castV = v
		}
	}
	names := map[string]bool{}
	for _, v := range g.Inputs {
		names[v.Name] = true
	}
	for _, v := range g.Consts {
		names[v.Name] = true
	}
	for _, n := range g.Nodes {
		names[n.Name] = true
		for _, o := range n.Outputs {
			if o != nil {
				names[o.Name] = true
			}
		}
		for _, a := range n.Attrs {
			if a.Kind == ir.AttrGraph || a.Kind == ir.AttrGraphs {
				return fmt.Errorf("halfmodel: %v has a subgraph: not supported", n)
			}
		}
	}
	fresh := func(base string) string {
		name := base
		for i := 1; names[name]; i++ {
			name = fmt.Sprintf("%s_%d", base, i)
		}
		names[name] = true
		return name
	}
	cast := func(in *ir.Value, to ir.DType, name string) (*ir.Value, *ir.Node) {
		out := &ir.Value{Name: fresh(name), Type: ir.TensorType(to, in.Type.Shape)}
		n := &ir.Node{Name: fresh(name), Op: "Cast", Version: castV, Inputs: []*ir.Value{in}, Outputs: []*ir.Value{out},
			Attrs: []*ir.Attr{{Name: "to", Kind: ir.AttrInt, I: int64(to)}}}
		out.Def = n
		return out, n
	}
	isF32 := func(v *ir.Value) bool { return v != nil && v.Type.Kind == ir.TensorKind && v.Type.DType == ir.F32 }

	// Constants: f32 -> f16, except those only float-required inputs read.
	keepF32 := map[*ir.Value]bool{}
	for _, n := range g.Nodes {
		for _, i := range floatInputs[n.Op] {
			if v := n.Input(i); v != nil {
				keepF32[v] = true
			}
		}
	}
	for _, n := range g.Nodes {
		for i, v := range n.Inputs {
			if v != nil && keepF32[v] && !contains(floatInputs[n.Op], i) {
				delete(keepF32, v) // also read as an ordinary input
			}
		}
	}
	for _, v := range g.Consts {
		if isF32(v) && !keepF32[v] {
			v.Const = ToF16(v.Const)
			v.Type = ir.TensorType(ir.F16, v.Type.Shape)
		}
	}
	var nodes []*ir.Node
	// Inputs: Cast(to=FLOAT16) after each float input.
	inMap := map[*ir.Value]*ir.Value{}
	for _, v := range g.Inputs {
		if isF32(v) {
			h, c := cast(v, ir.F16, v.Name+"_to_f16")
			inMap[v] = h
			nodes = append(nodes, c)
		}
	}
	// Outputs: the producer writes a new f16 value, Cast(to=FLOAT) writes
	// the output.
	outs := map[*ir.Value]bool{}
	for _, v := range g.Outputs {
		outs[v] = true
	}
	for _, n := range g.Nodes {
		for i, v := range n.Inputs {
			if h, ok := inMap[v]; ok {
				n.Inputs[i] = h
			}
		}
		switch n.Op {
		case "Constant", "ConstantOfShape":
			if a := n.Attr("value"); a != nil && a.Kind == ir.AttrTensor && a.T != nil && a.T.DType == ir.F32 && !keepF32[n.Outputs[0]] {
				a.T = ToF16(a.T)
			}
			if a := n.Attr("value_float"); a != nil && n.Op == "Constant" && !keepF32[n.Outputs[0]] {
				t := &ir.Tensor{Name: n.Outputs[0].Name, DType: ir.F32, Raw: binary.LittleEndian.AppendUint32(nil, math.Float32bits(a.F))}
				n.Attrs = []*ir.Attr{{Name: "value", Kind: ir.AttrTensor, T: ToF16(t)}}
			}
			if a := n.Attr("value_floats"); a != nil && n.Op == "Constant" && !keepF32[n.Outputs[0]] {
				t := &ir.Tensor{Name: n.Outputs[0].Name, DType: ir.F32, Shape: []int64{int64(len(a.Floats))}}
				for _, f := range a.Floats {
					t.Raw = binary.LittleEndian.AppendUint32(t.Raw, math.Float32bits(f))
				}
				n.Attrs = []*ir.Attr{{Name: "value", Kind: ir.AttrTensor, T: ToF16(t)}}
			}
		case "Cast", "CastLike", "EyeLike", "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli", "Multinomial":
			if a := n.Attr("to"); a != nil && a.I == int64(ir.F32) {
				a.I = int64(ir.F16)
			}
			if a := n.Attr("dtype"); a != nil && a.I == int64(ir.F32) && !blockList[n.Op] {
				a.I = int64(ir.F16)
			}
		}
		if blockList[n.Op] {
			// Float inputs cast back to f32, float outputs cast to f16.
			for i, v := range n.Inputs {
				if v != nil && v.Type.Kind == ir.TensorKind && (v.Type.DType == ir.F16 || isF32(v) && !v.IsConst() && v.Def != nil) {
					if v.Type.DType == ir.F16 {
						w, c := cast(v, ir.F32, v.Name+"_to_f32")
						nodes = append(nodes, c)
						n.Inputs[i] = w
					}
				}
			}
			nodes = append(nodes, n)
			for i, o := range n.Outputs {
				if isF32(o) && !outs[o] {
					w := &ir.Value{Name: fresh(o.Name + "_f32"), Type: o.Type, Def: n}
					n.Outputs[i] = w
					o.Type = ir.TensorType(ir.F16, o.Type.Shape)
					_, c := cast(w, ir.F16, o.Name+"_to_f16")
					c.Outputs[0] = o
					o.Def = c
					nodes = append(nodes, c)
				}
			}
			continue
		}
		for i, v := range n.Inputs {
			if v != nil && isF32(v) && v.IsConst() && !contains(floatInputs[n.Op], i) {
				return fmt.Errorf("halfmodel: %v reads f32 constant %q as an ordinary input", n, v.Name)
			}
		}
		nodes = append(nodes, n)
		for i, o := range n.Outputs {
			if !isF32(o) || keepF32[o] {
				continue
			}
			if outs[o] {
				h := &ir.Value{Name: fresh(o.Name + "_f16"), Type: ir.TensorType(ir.F16, o.Type.Shape), Def: n}
				n.Outputs[i] = h
				_, c := cast(h, ir.F32, o.Name+"_to_f32")
				c.Outputs[0] = o
				o.Def = c
				nodes = append(nodes, c)
				inMap[o] = h // later readers read the f16 value
				continue
			}
			o.Type = ir.TensorType(ir.F16, o.Type.Shape)
		}
	}
	// A graph input that is also an output passes through unchanged.
	g.Nodes = nodes
	return nil
}

func contains(s []int, x int) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// ToF16 returns t (f32) rounded to f16, to nearest even.
func ToF16(t *ir.Tensor) *ir.Tensor {
	n := int(t.NumElements())
	h := &ir.Tensor{Name: t.Name, DType: ir.F16, Shape: append([]int64(nil), t.Shape...), Raw: make([]byte, 2*n)}
	for i := 0; i < n; i++ {
		f := math.Float32frombits(binary.LittleEndian.Uint32(t.Raw[4*i:]))
		binary.LittleEndian.PutUint16(h.Raw[2*i:], ir.F32ToF16(f))
	}
	return h
}
