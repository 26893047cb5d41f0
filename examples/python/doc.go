//go:generate go run github.com/cuvil/cuvil/cmd/cuvil compile -cshared -model ../../testdata/mnist/model.onnx -pkg mnist -out ./mnist

// Package python is an example: the mnist model compiled with -cshared
// into ./mnist, whose capi/ folder builds libmnist.so and whose
// python/mnist.py loads it with ctypes (see README.md and classify.py).
package python
