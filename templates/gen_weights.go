package templates

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"unsafe"
)

// This file goes whole into every package compiled with -weights file (as
// weights.go): the weights are not embedded but loaded at run time from
// the weights.bin written beside the package, by NewFromFile (mapped where
// the platform can, weights_mmap.go) or NewFromReader, and checked against
// the size and checksum compiled into model.go.

var errCuvilNoEmbed = errors.New("this package's weights are not embedded (it was compiled with -weights file): load them with NewFromFile(path) or NewFromReader(r, size)")

// cuvilOpenWeights maps (or reads) the weights file at path and checks its
// size and checksum; release unmaps it.
func cuvilOpenWeights(path string, size int64, sum uint32) (blob string, release func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, fmt.Errorf("weights: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", nil, fmt.Errorf("weights: %w", err)
	}
	if !st.Mode().IsRegular() {
		return "", nil, fmt.Errorf("weights file %s is not a regular file", path)
	}
	if err := cuvilCheckSize(path, st.Size(), size); err != nil {
		return "", nil, err
	}
	if size == 0 {
		return "", func() {}, nil
	}
	b, release, err := cuvilMapFile(f, int(size))
	if err != nil {
		return "", nil, fmt.Errorf("weights file %s: %w", path, err)
	}
	blob = unsafe.String(&b[0], len(b))
	if err := cuvilCheckSum(path, blob, sum); err != nil {
		release()
		return "", nil, err
	}
	return blob, release, nil
}

// cuvilReadWeights reads size bytes of weights from r into memory aligned
// for every dtype and checks them.
func cuvilReadWeights(r io.ReaderAt, size, want int64, sum uint32) (string, error) {
	if r == nil {
		return "", errors.New("weights: the reader is nil")
	}
	if err := cuvilCheckSize("from the reader", size, want); err != nil {
		return "", err
	}
	if size == 0 {
		return "", nil
	}
	b, err := cuvilReadAt(r, int(size))
	if err != nil {
		return "", err
	}
	blob := unsafe.String(&b[0], len(b))
	if err := cuvilCheckSum("from the reader", blob, sum); err != nil {
		return "", err
	}
	return blob, nil
}

// cuvilReadAt reads n bytes at offset 0 into a new buffer aligned to 8
// bytes (that of the widest Go element type).
func cuvilReadAt(r io.ReaderAt, n int) ([]byte, error) {
	words := make([]uint64, (n+7)/8)
	b := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
	got, err := r.ReadAt(b, 0)
	if got < n {
		if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("weights: read %d of %d bytes: the weights are truncated", got, n)
		}
		return nil, fmt.Errorf("weights: %w", err)
	}
	return b, nil
}

func cuvilCheckSize(what string, have, want int64) error {
	if want > math.MaxInt || have < 0 {
		return fmt.Errorf("weights %s: %d bytes do not fit in memory on this platform", what, want)
	}
	switch {
	case have < want:
		return fmt.Errorf("weights %s: %d bytes, want %d: they are truncated, or were written by another compile of the model", what, have, want)
	case have > want:
		return fmt.Errorf("weights %s: %d bytes, want %d: they were written by another compile of the model", what, have, want)
	}
	return nil
}

func cuvilCheckSum(what, blob string, want uint32) error {
	if got := cuvilChecksum(blob); got != want {
		return fmt.Errorf("weights %s: checksum %08x, want %08x: they are corrupted, or were written by another compile of the model", what, got, want)
	}
	return nil
}
