package passes

import (
	"encoding/binary"
	"math/rand"
	"reflect"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/templates"
)

// Every dtype the kernels take survives ir.Tensor -> templates.Tensor ->
// ir.Tensor bit for bit, and decodes to the documented Go types.
func TestTensorConversionRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	wantGo := map[ir.DType]any{
		ir.F32: []float32{}, ir.F64: []float64{}, ir.F16: []uint16{}, ir.BF16: []uint16{},
		ir.I8: []int8{}, ir.U8: []uint8{}, ir.I16: []int16{}, ir.U16: []uint16{},
		ir.I32: []int32{}, ir.U32: []uint32{}, ir.I64: []int64{}, ir.U64: []uint64{},
		ir.Bool: []bool{}, ir.String: []string{},
	}
	for dt, goType := range wantGo {
		shape := []int64{3, 5}
		src := &ir.Tensor{Name: "t", DType: dt, Shape: shape}
		if dt == ir.String {
			src.Strings = []string{"a", "", "ünï", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o"}
		} else {
			src.Raw = make([]byte, 15*dt.Size())
			r.Read(src.Raw)
			if dt == ir.Bool {
				for i := range src.Raw {
					src.Raw[i] &= 1
				}
			}
		}
		kt, err := ToKernelTensor(src)
		if err != nil {
			t.Fatalf("%s: %v", dt, err)
		}
		if reflect.TypeOf(kt.Data) != reflect.TypeOf(goType) || kt.Len() != 15 || kt.DType != templates.DType(dt) {
			t.Fatalf("%s: kernel tensor %v holds %T", dt, kt, kt.Data)
		}
		back, err := FromKernelTensor(kt)
		if err != nil {
			t.Fatalf("%s: %v", dt, err)
		}
		if !reflect.DeepEqual(back.Shape, shape) || string(back.Raw) != string(src.Raw) || !reflect.DeepEqual(back.Strings, src.Strings) {
			t.Errorf("%s: round trip changed the tensor", dt)
		}
	}
}

func TestTensorConversionValues(t *testing.T) {
	raw := make([]byte, 4)
	binary.LittleEndian.PutUint16(raw, 0x3c00)     // f16 1.0
	binary.LittleEndian.PutUint16(raw[2:], 0xc000) // f16 -2.0
	kt, err := ToKernelTensor(&ir.Tensor{DType: ir.F16, Shape: []int64{2}, Raw: raw})
	if err != nil {
		t.Fatal(err)
	}
	if h := kt.U16(); templates.F16ToF32(h[0]) != 1 || templates.F16ToF32(h[1]) != -2 {
		t.Errorf("f16 bits %x", h)
	}
	kt, err = ToKernelTensor(ir.NewTensorInt64(nil, []int64{-7}))
	if err != nil || kt.I64()[0] != -7 || len(kt.Shape) != 0 {
		t.Errorf("scalar i64: %v %v", kt, err)
	}
}

func TestTensorConversionErrors(t *testing.T) {
	if _, err := ToKernelTensor(&ir.Tensor{Name: "z", DType: ir.C64, Shape: []int64{1}, Raw: make([]byte, 8)}); err == nil {
		t.Error("complex tensor converted")
	}
	wantErr(t, func() error {
		_, err := ToKernelTensor(&ir.Tensor{Name: "short", DType: ir.F32, Shape: []int64{4}, Raw: make([]byte, 8)})
		return err
	}(), "short", "wants 16")
	_, err := FromKernelTensor(&templates.Tensor{DType: templates.F32, Shape: []int{3}, Data: []float32{1, 2}})
	wantErr(t, err, "want 3 elements")
	_, err = FromKernelTensor(&templates.Tensor{DType: templates.I64, Shape: []int{1}, Data: []float32{1}})
	wantErr(t, err, "[]float32")
}
