package templates

func init() {
	register("Gemm", Gemm)
	register("MatMul", MatMul)
}
