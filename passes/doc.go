// Package passes holds the compiler's pass pipeline: shape and type
// inference, constant folding, dead-code elimination and the passes that
// follow them. Each pass is a *Pass value; Pipeline lists them in order and
// Run executes them, verifying the IR between passes on request.
package passes
