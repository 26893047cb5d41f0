package gen

import (
	"encoding/binary"
	"fmt"

	"github.com/cuvil/cuvil/ir"
)

// weightEntry is where one constant lives in weights.bin.
type weightEntry struct {
	name  string
	dtype ir.DType
	shape []int64
	off   int64 // byte offset, a multiple of 8
	size  int64 // bytes
}

// packWeights lays the constants out in one little-endian blob, each at an
// 8-byte aligned offset. Numeric and bool tensors are stored in raw_data
// layout, except that the 4-bit and 2-bit dtypes take one byte per element
// (ir.Tensor.Raw's layout; int4/int2 sign-extended); string tensors as a uint32 length followed by the bytes, for each
// element.
func packWeights(ts []*ir.Tensor) ([]byte, []weightEntry, error) {
	var blob []byte
	entries := make([]weightEntry, len(ts))
	for i, t := range ts {
		if err := t.Check(); err != nil {
			return nil, nil, fmt.Errorf("gen: constant %d: %v", i, err)
		}
		for len(blob)%8 != 0 {
			blob = append(blob, 0)
		}
		start := len(blob)
		if t.DType == ir.String {
			for _, s := range t.Strings {
				blob = binary.LittleEndian.AppendUint32(blob, uint32(len(s)))
				blob = append(blob, s...)
			}
		} else {
			blob = append(blob, t.Raw...)
		}
		entries[i] = weightEntry{name: t.Name, dtype: t.DType, shape: t.Shape, off: int64(start), size: int64(len(blob) - start)}
	}
	return blob, entries, nil
}
