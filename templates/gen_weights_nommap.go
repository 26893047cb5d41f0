//go:build !linux && !darwin

package templates

import "os"

// cuvilMapFile reads the first size bytes of f into aligned memory: this
// platform has no syscall.Mmap (weights_mmap.go maps the file where it has).
func cuvilMapFile(f *os.File, size int) ([]byte, func(), error) {
	b, err := cuvilReadAt(f, size)
	return b, func() {}, err
}
