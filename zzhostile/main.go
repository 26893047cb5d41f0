package main

import (
	"fmt"
	"os"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
)

func main() {
	for name, text := range map[string]string{
		"cos": `opset ai.onnx 17
graph main(%x: f32[1]) -> (%y) {
  %s = const i64[3] {100000, 100000, 100}
  %c = ConstantOfShape <?[?]> %s
  %y = Add <?[?]> %c %x
}`,
		"expand": `opset ai.onnx 17
graph main(%x: f32[1]) -> (%y) {
  %s = const i64[3] {1000000, 1000000, 1000}
  %y = Expand <?[?]> %x %s
}`,
		"tile": `opset ai.onnx 17
graph main(%x: f32[2]) -> (%y) {
  %r = const i64[1] {9223372036854775807}
  %y = Tile <?[?]> %x %r
}`,
	} {
		m, err := ir.Parse(text)
		if err != nil {
			panic(err)
		}
		b, err := onnx.Encode(m)
		if err != nil {
			panic(err)
		}
		os.WriteFile("/tmp/h_"+name+".onnx", b, 0o644)
		fmt.Println(name)
	}
}
