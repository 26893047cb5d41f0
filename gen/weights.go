package gen

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/cuvil/cuvil/ir"
)

// weightAlign is the alignment of every constant's offset in weights.bin:
// a cache line, so that a constant viewed in place (the embedded blob, or
// the file mapped by NewFromFile, whose start is page aligned) starts on
// one, and every element is naturally aligned for its Go type.
const weightAlign = 64

// weightEntry is where one constant lives in weights.bin.
type weightEntry struct {
	name  string
	dtype ir.DType
	shape []int64
	off   int64 // byte offset, a multiple of weightAlign
	size  int64 // bytes
	// stored is F16 for an f32 constant weights.bin holds as halves
	// (ir.Tensor.Store), widened at New; zero otherwise.
	stored ir.DType
}

// crcTable is the CRC-32 (Castagnoli) of weights.bin that the generated
// package compiles in and NewFromFile checks (hash/crc32, std).
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// weightsSum is weights.bin's checksum.
func weightsSum(blob []byte) uint32 { return crc32.Checksum(blob, crcTable) }

// packWeights lays the constants out in one little-endian blob, each at a
// weightAlign-aligned offset. Numeric and bool tensors are stored in raw_data
// layout, except that the 4-bit and 2-bit dtypes take one byte per element
// (ir.Tensor.Raw's layout; int4/int2 sign-extended); string tensors as a uint32 length followed by the bytes, for each
// element. That is the layout of the generated Tensor's Data on a
// little-endian machine, so New can take the numeric constants as views of
// the blob instead of copies.
func packWeights(ts []*ir.Tensor) ([]byte, []weightEntry, error) {
	var blob []byte
	entries := make([]weightEntry, len(ts))
	for i, t := range ts {
		if err := t.Check(); err != nil {
			return nil, nil, fmt.Errorf("gen: constant %d: %v", i, err)
		}
		for len(blob)%weightAlign != 0 {
			blob = append(blob, 0)
		}
		start := len(blob)
		if t.DType == ir.String {
			for _, s := range t.Strings {
				blob = binary.LittleEndian.AppendUint32(blob, uint32(len(s)))
				blob = append(blob, s...)
			}
		} else if storedHalf(t) {
			for j := 0; j+4 <= len(t.Raw); j += 4 {
				blob = binary.LittleEndian.AppendUint16(blob, ir.F32ToF16(math.Float32frombits(binary.LittleEndian.Uint32(t.Raw[j:]))))
			}
		} else {
			blob = append(blob, t.Raw...)
		}
		entries[i] = weightEntry{name: t.Name, dtype: t.DType, shape: t.Shape, off: int64(start), size: int64(len(blob) - start)}
		if storedHalf(t) {
			entries[i].stored = ir.F16
		}
	}
	if len(blob) > 0 && len(blob) < minEmbedSize {
		blob = append(blob, make([]byte, minEmbedSize-len(blob))...)
	}
	return blob, entries, nil
}

// storedHalf reports whether weights.bin stores t (f32) as halves.
func storedHalf(t *ir.Tensor) bool { return t.Store == ir.F16 && t.DType == ir.F32 }

// anyStoredHalf reports whether some constant is stored half: the package
// then copies WidenF16 (templates/k_half.go) and New widens them.
func anyStoredHalf(ts []*ir.Tensor) bool {
	for _, t := range ts {
		if storedHalf(t) {
			return true
		}
	}
	return false
}

// minEmbedSize is the smallest weights.bin gen writes (zeros pad a smaller
// one): the Go compiler embeds a file of at most 1 KiB as a string literal,
// which the linker may place at any address, and a larger one as a symbol
// of its own, which it aligns like other data (32 bytes on amd64 and
// arm64), so that New's views of it are aligned on every machine.
const minEmbedSize = 1025
