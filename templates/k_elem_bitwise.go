package templates

// BitwiseAnd, BitwiseOr, BitwiseXor (opset 18, broadcasting) and
// BitwiseNot on integer tensors (Swish, opset 24, is in k_elem_act_unfused.go).

var (
	ewOpBitAnd = ewBin{i: func(a, b int64) int64 { return a & b }, u: func(a, b uint64) uint64 { return a & b }}
	ewOpBitOr  = ewBin{i: func(a, b int64) int64 { return a | b }, u: func(a, b uint64) uint64 { return a | b }}
	ewOpBitXor = ewBin{i: func(a, b int64) int64 { return a ^ b }, u: func(a, b uint64) uint64 { return a ^ b }}
	ewOpBitNot = ewUn{i: func(x int64) int64 { return ^x }, u: func(x uint64) uint64 { return ^x }}
	ewOpSwish  = ewUn{f: actSwish64}
)

func BitwiseAnd(n *Node) error { return ewBinary(n, &ewOpBitAnd) }
func BitwiseOr(n *Node) error  { return ewBinary(n, &ewOpBitOr) }
func BitwiseXor(n *Node) error { return ewBinary(n, &ewOpBitXor) }
func BitwiseNot(n *Node) error { return ewUnary(n, &ewOpBitNot, 0, 0) }
