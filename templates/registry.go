package templates

// Kernels maps an op name to its kernel, for the compiler's constant folder
// and tests (ops outside ai.onnx are keyed "domain::Op"). Each kernel file
// registers its ops from a registry_*.go file, which, like this one, gen
// never copies into generated packages: they call kernels directly by name.
var Kernels = map[string]Kernel{}

func register(op string, k Kernel) { Kernels[op] = k }
