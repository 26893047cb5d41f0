package onnx

import (
	"fmt"

	"github.com/cuvil/cuvil/ir"
	pb "github.com/cuvil/cuvil/ir/onnx/onnxpb"
)

// unknownType is the type of a value ONNX declares nothing about: a tensor
// of unknown dtype and rank, to be filled in by shape inference.
func unknownType() ir.Type { return ir.Type{Kind: ir.TensorKind, Unranked: true} }

func elemDType(code int32, allowUndefined bool) (ir.DType, error) {
	dt := ir.DType(code)
	if code == 0 && allowUndefined {
		return ir.Undefined, nil
	}
	if code < 0 || code > 255 || !dt.Valid() {
		return 0, fmt.Errorf("invalid dtype %d (want 1..%d, TensorProto.DataType)", code, int(ir.I2))
	}
	return dt, nil
}

// typeFromProto converts a declared type. Dims without value or name get a
// fresh symbol from im.freshDim, so that every ir.Dim is a size or a symbol.
func (im *importer) typeFromProto(tp *pb.TypeProto) (ir.Type, error) {
	if tp == nil {
		return unknownType(), nil
	}
	switch v := tp.Value.(type) {
	case nil:
		return unknownType(), nil
	case *pb.TypeProto_TensorType:
		dt, err := elemDType(v.TensorType.GetElemType(), true)
		if err != nil {
			return ir.Type{}, err
		}
		t := ir.Type{Kind: ir.TensorKind, DType: dt}
		sh := v.TensorType.Shape
		if sh == nil {
			t.Unranked = true
			return t, nil
		}
		t.Shape = make(ir.Shape, len(sh.Dim))
		n := int64(1)
		for i, d := range sh.Dim {
			switch dv := d.Value.(type) {
			case *pb.TensorShapeProto_Dimension_DimValue:
				if dv.DimValue < 0 {
					return ir.Type{}, fmt.Errorf("negative dim %d at axis %d", dv.DimValue, i)
				}
				if dv.DimValue > 0 && n > maxElements/dv.DimValue {
					return ir.Type{}, fmt.Errorf("dim %d at axis %d makes the shape too large (limit %d elements)", dv.DimValue, i, maxElements)
				}
				n *= dv.DimValue
				t.Shape[i] = ir.D(dv.DimValue)
			case *pb.TensorShapeProto_Dimension_DimParam:
				if dv.DimParam == "" {
					t.Shape[i] = ir.S(im.freshDim())
				} else {
					t.Shape[i] = ir.S(dv.DimParam)
				}
			default:
				t.Shape[i] = ir.S(im.freshDim())
			}
		}
		return t, nil
	case *pb.TypeProto_SequenceType:
		return im.wrapType(ir.SequenceKind, v.SequenceType.ElemType)
	case *pb.TypeProto_OptionalType:
		return im.wrapType(ir.OptionalKind, v.OptionalType.ElemType)
	case *pb.TypeProto_MapType:
		key, err := elemDType(v.MapType.GetKeyType(), false)
		if err != nil {
			return ir.Type{}, fmt.Errorf("map key: %w", err)
		}
		if !key.IsInt() && key != ir.String {
			return ir.Type{}, fmt.Errorf("map key dtype %s: want an integer type or string", key)
		}
		t, err := im.wrapType(ir.MapKind, v.MapType.ValueType)
		t.DType = key
		return t, err
	case *pb.TypeProto_SparseTensorType:
		return ir.Type{}, fmt.Errorf("sparse tensor values are not supported")
	case *pb.TypeProto_OpaqueType:
		return ir.Type{}, fmt.Errorf("opaque type %s.%s is not supported", v.OpaqueType.GetDomain(), v.OpaqueType.GetName())
	}
	return ir.Type{}, fmt.Errorf("unknown TypeProto value %T", tp.Value)
}

func (im *importer) wrapType(kind ir.TypeKind, elem *pb.TypeProto) (ir.Type, error) {
	t := ir.Type{Kind: kind}
	if elem == nil {
		return t, nil
	}
	e, err := im.typeFromProto(elem)
	if err != nil {
		return ir.Type{}, err
	}
	t.Elem = &e
	return t, nil
}

// typeToProto is the inverse of typeFromProto. Symbols, including the
// importer's unk__N, are written as dim_param so a round trip keeps them.
func typeToProto(t ir.Type) *pb.TypeProto {
	switch t.Kind {
	case ir.SequenceKind:
		return &pb.TypeProto{Value: &pb.TypeProto_SequenceType{SequenceType: &pb.TypeProto_Sequence{ElemType: elemToProto(t.Elem)}}}
	case ir.OptionalKind:
		return &pb.TypeProto{Value: &pb.TypeProto_OptionalType{OptionalType: &pb.TypeProto_Optional{ElemType: elemToProto(t.Elem)}}}
	case ir.MapKind:
		return &pb.TypeProto{Value: &pb.TypeProto_MapType{MapType: &pb.TypeProto_Map{KeyType: ptr(int32(t.DType)), ValueType: elemToProto(t.Elem)}}}
	}
	tt := &pb.TypeProto_Tensor{ElemType: ptr(int32(t.DType))}
	if !t.Unranked {
		tt.Shape = &pb.TensorShapeProto{Dim: make([]*pb.TensorShapeProto_Dimension, len(t.Shape))}
		for i, d := range t.Shape {
			if d.Sym != "" {
				tt.Shape.Dim[i] = &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimParam{DimParam: d.Sym}}
			} else {
				tt.Shape.Dim[i] = &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: d.Size}}
			}
		}
	}
	return &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: tt}}
}

func elemToProto(e *ir.Type) *pb.TypeProto {
	if e == nil {
		return nil
	}
	return typeToProto(*e)
}
