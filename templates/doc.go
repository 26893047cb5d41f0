// Package templates is the Go that generated packages carry: the runtime
// (tensors, nodes, sessions helpers) and the reference kernels. It is real,
// compiled and tested Go; gen copies the files a model needs into the
// generated package and renames the package clause. The compiler also calls
// the kernels directly, through Kernels, to fold constants.
//
// Rules for every file here (gen relies on them):
//   - import only the standard library;
//   - one top-level declaration is never split across files, and a kernel
//     file depends only on runtime files (rt_*.go) and on files it names in
//     calls, which gen follows (see gen/copy.go);
//   - a kernel does not allocate once it has run at the same shapes: output
//     tensors are grown with Tensor.Resize, scratch with Node.Scratch*;
//   - registry.go and *_test.go are compiler-side only and never copied.
package templates

import "embed"

// Sources holds this package's own files (Go and assembly) so an installed cuvil binary can
// copy them without the source tree.
//
//go:embed *.go *.s
var Sources embed.FS

// CAPI holds the -cshared C API (capi/): main.go and cerr.go, compiled
// under the build tag cuvil_capi against examples/python/mnist, that gen
// turns into text/templates (their //tmpl: markers, gen/cshared.go), and
// the templates of the Python wrapper and the Makefile.
//
//go:embed capi/main.go capi/cerr.go capi/capi.py.tmpl capi/Makefile.tmpl
var CAPI embed.FS

// Lite holds the lite profile's kernels (lite/kernels.go), which gen/lite.go
// copies whole into every -profile lite package.
//
//go:embed lite/kernels.go
var Lite embed.FS
