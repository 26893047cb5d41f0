package passes

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/templates"
)

// errNoKernel means the kernels cannot evaluate a node: no kernel for its
// op, or an attribute or dtype they do not take. Folding just skips it.
var errNoKernel = errors.New("no kernel")

// ToKernelTensor converts an IR constant into the kernels' tensor, decoding
// the packed little-endian buffer into the Go slice type templates.Tensor
// documents for the dtype (f16 and bf16 stay []uint16 bits).
func ToKernelTensor(t *ir.Tensor) (*templates.Tensor, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	n := int(t.NumElements())
	shape := make([]int, len(t.Shape))
	for i, d := range t.Shape {
		shape[i] = int(d)
	}
	b := t.Raw
	le := binary.LittleEndian
	var data any
	switch t.DType {
	case ir.F32:
		s := make([]float32, n)
		for i := range s {
			s[i] = math.Float32frombits(le.Uint32(b[4*i:]))
		}
		data = s
	case ir.F64:
		s := make([]float64, n)
		for i := range s {
			s[i] = math.Float64frombits(le.Uint64(b[8*i:]))
		}
		data = s
	case ir.F16, ir.BF16, ir.U16:
		s := make([]uint16, n)
		for i := range s {
			s[i] = le.Uint16(b[2*i:])
		}
		data = s
	case ir.I8, ir.I4, ir.I2:
		s := make([]int8, n)
		for i := range s {
			s[i] = int8(b[i])
		}
		data = s
	case ir.U8, ir.U4, ir.U2, ir.F8E4M3FN, ir.F8E4M3FNUZ, ir.F8E5M2, ir.F8E5M2FNUZ, ir.F4E2M1, ir.F8E8M0:
		data = append([]uint8(nil), b[:n]...)
	case ir.I16:
		s := make([]int16, n)
		for i := range s {
			s[i] = int16(le.Uint16(b[2*i:]))
		}
		data = s
	case ir.I32:
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(le.Uint32(b[4*i:]))
		}
		data = s
	case ir.U32:
		s := make([]uint32, n)
		for i := range s {
			s[i] = le.Uint32(b[4*i:])
		}
		data = s
	case ir.I64:
		s := make([]int64, n)
		for i := range s {
			s[i] = int64(le.Uint64(b[8*i:]))
		}
		data = s
	case ir.U64:
		s := make([]uint64, n)
		for i := range s {
			s[i] = le.Uint64(b[8*i:])
		}
		data = s
	case ir.Bool:
		s := make([]bool, n)
		for i := range s {
			s[i] = b[i] != 0
		}
		data = s
	case ir.String:
		data = append([]string(nil), t.Strings...)
	default:
		return nil, fmt.Errorf("tensor %q: the kernels do not take dtype %s", t.Name, t.DType)
	}
	return &templates.Tensor{DType: templates.DType(t.DType), Shape: shape, Data: data}, nil
}

// FromKernelTensor converts a kernel tensor back into an IR constant.
func FromKernelTensor(t *templates.Tensor) (*ir.Tensor, error) {
	n := t.Len()
	shape := make([]int64, len(t.Shape))
	for i, d := range t.Shape {
		shape[i] = int64(d)
	}
	out := &ir.Tensor{DType: ir.DType(t.DType), Shape: shape}
	le := binary.LittleEndian
	bad := func() error {
		return fmt.Errorf("kernel tensor %s holds %T, want %d elements of its dtype", t, t.Data, n)
	}
	switch s := t.Data.(type) {
	case []float32:
		if t.DType != templates.F32 || len(s) != n {
			return nil, bad()
		}
		out.Raw = make([]byte, 4*n)
		for i, v := range s {
			le.PutUint32(out.Raw[4*i:], math.Float32bits(v))
		}
	case []float64:
		if t.DType != templates.F64 || len(s) != n {
			return nil, bad()
		}
		out.Raw = make([]byte, 8*n)
		for i, v := range s {
			le.PutUint64(out.Raw[8*i:], math.Float64bits(v))
		}
	case []uint16:
		if t.DType != templates.F16 && t.DType != templates.BF16 && t.DType != templates.U16 || len(s) != n {
			return nil, bad()
		}
		out.Raw = make([]byte, 2*n)
		for i, v := range s {
			le.PutUint16(out.Raw[2*i:], v)
		}
	case []int8:
		if t.DType != templates.I8 && t.DType != templates.I4 && t.DType != templates.I2 || len(s) != n {
			return nil, bad()
		}
		out.Raw = make([]byte, n)
		for i, v := range s {
			out.Raw[i] = byte(v)
		}
	case []uint8:
		if ir.DType(t.DType).Size() != 1 || t.DType == templates.I8 || t.DType == templates.I4 || t.DType == templates.I2 || t.DType == templates.Bool || len(s) != n {
			return nil, bad()
		}
		out.Raw = append([]byte(nil), s...)
	case []int16:
		if t.DType != templates.I16 || len(s) != n {
			return nil, bad()
		}
		out.Raw = make([]byte, 2*n)
		for i, v := range s {
			le.PutUint16(out.Raw[2*i:], uint16(v))
		}
	case []int32:
		if t.DType != templates.I32 || len(s) != n {
			return nil, bad()
		}
		out.Raw = make([]byte, 4*n)
		for i, v := range s {
			le.PutUint32(out.Raw[4*i:], uint32(v))
		}
	case []uint32:
		if t.DType != templates.U32 || len(s) != n {
			return nil, bad()
		}
		out.Raw = make([]byte, 4*n)
		for i, v := range s {
			le.PutUint32(out.Raw[4*i:], v)
		}
	case []int64:
		if t.DType != templates.I64 || len(s) != n {
			return nil, bad()
		}
		out.Raw = make([]byte, 8*n)
		for i, v := range s {
			le.PutUint64(out.Raw[8*i:], uint64(v))
		}
	case []uint64:
		if t.DType != templates.U64 || len(s) != n {
			return nil, bad()
		}
		out.Raw = make([]byte, 8*n)
		for i, v := range s {
			le.PutUint64(out.Raw[8*i:], v)
		}
	case []bool:
		if t.DType != templates.Bool || len(s) != n {
			return nil, bad()
		}
		out.Raw = make([]byte, n)
		for i, v := range s {
			if v {
				out.Raw[i] = 1
			}
		}
	case []string:
		if t.DType != templates.String || len(s) != n {
			return nil, bad()
		}
		out.Strings = append([]string(nil), s...)
	default:
		return nil, bad()
	}
	return out, nil
}

// kernelAttrs converts a node's attributes to the kernels' form. Graph and
// type attributes have no kernel form: such nodes are not evaluated.
func kernelAttrs(n *ir.Node) (templates.Attrs, error) {
	out := templates.Attrs{}
	for _, a := range n.Attrs {
		switch a.Kind {
		case ir.AttrInt:
			out[a.Name] = a.I
		case ir.AttrFloat:
			out[a.Name] = a.F
		case ir.AttrString:
			out[a.Name] = a.S
		case ir.AttrInts:
			out[a.Name] = a.Ints
		case ir.AttrFloats:
			out[a.Name] = a.Floats
		case ir.AttrStrings:
			out[a.Name] = a.Strings
		case ir.AttrTensor:
			t, err := ToKernelTensor(a.T)
			if err != nil {
				return nil, fmt.Errorf("attribute %s: %w", a.Name, err)
			}
			out[a.Name] = t
		case ir.AttrTensors:
			ts := make([]*templates.Tensor, len(a.Tensors))
			for i, t := range a.Tensors {
				kt, err := ToKernelTensor(t)
				if err != nil {
					return nil, fmt.Errorf("attribute %s: %w", a.Name, err)
				}
				ts[i] = kt
			}
			out[a.Name] = ts
		default:
			return nil, fmt.Errorf("attribute %s (%s): %w", a.Name, a.Kind, errNoKernel)
		}
	}
	return out, nil
}

// Eval runs node n on constant inputs (nil for omitted ones) with its
// kernel from templates.Kernels and returns its outputs (nil for omitted
// ones). The error wraps errNoKernel when there is no way to run it.
func Eval(n *ir.Node, inputs []*ir.Tensor) ([]*ir.Tensor, error) {
	if n.Domain != "" && n.Domain != "ai.onnx" {
		return nil, fmt.Errorf("op %s::%s: %w", n.Domain, n.Op, errNoKernel)
	}
	k := templates.Kernels[n.Op]
	if k == nil {
		return nil, fmt.Errorf("op %s: %w", n.Op, errNoKernel)
	}
	attrs, err := kernelAttrs(n)
	if err != nil {
		return nil, err
	}
	kn := &templates.Node{Name: n.Name, Op: n.Op, Version: n.Version, Attrs: attrs}
	for i, t := range inputs {
		if t == nil {
			kn.In = append(kn.In, nil)
			continue
		}
		kt, err := ToKernelTensor(t)
		if err != nil {
			return nil, fmt.Errorf("input %d: %w: %w", i, err, errNoKernel)
		}
		kn.In = append(kn.In, kt)
	}
	kn.Out = make([]*templates.Tensor, len(n.Outputs))
	for i, o := range n.Outputs {
		if o != nil {
			kn.Out[i] = &templates.Tensor{}
		}
	}
	if err := k(kn); err != nil {
		return nil, err
	}
	out := make([]*ir.Tensor, len(n.Outputs))
	for i, t := range kn.Out {
		if t == nil || n.Outputs[i] == nil {
			continue
		}
		if t.Data == nil {
			return nil, fmt.Errorf("kernel left output %d unset", i)
		}
		ot, err := FromKernelTensor(t)
		if err != nil {
			return nil, fmt.Errorf("output %d: %w", i, err)
		}
		ot.Name = n.Outputs[i].Name
		out[i] = ot
	}
	return out, nil
}
