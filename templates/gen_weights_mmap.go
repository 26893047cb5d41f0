//go:build linux || darwin

package templates

import (
	"os"
	"syscall"
)

// cuvilMapFile maps the first size bytes of f read-only (the kernels never
// write their weights, and a write would fault rather than corrupt the
// file); where mapping fails it reads the file instead. The file must not
// be truncated or rewritten in place while the model uses it: write new
// weights to a new file and rename it over the old one.
func cuvilMapFile(f *os.File, size int) ([]byte, func(), error) {
	b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		b, err := cuvilReadAt(f, size)
		return b, func() {}, err
	}
	return b, func() { syscall.Munmap(b) }, nil
}
