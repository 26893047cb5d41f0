package ir

import (
	"fmt"
	"strings"
)

// Operators of the "cuvil" domain: the fused forms the passes produce
// (passes/fuse_*.go, fold_batchnorm.go). They are declared like the ONNX
// ops, so the verifier checks their arity, attributes and dtypes. Their
// kernels are registered in templates/registry.go under "cuvil::<Op>"
// (templates/README.md lists their files).

// CuvilDomain is the domain of Cuvil's own operators; a model that uses
// them imports opset CuvilOpset of it.
const (
	CuvilDomain = "cuvil"
	CuvilOpset  = 1
)

// The activation attributes shared by the fused ops: activation is "" (none),
// Relu, Clip (activation_params = [min, max]), LeakyRelu ([alpha]),
// Sigmoid, Tanh, HardSwish, Gelu, GeluTanh (tanh approximation), Swish
// ([alpha]; SiLU with alpha 1), HardSigmoid ([alpha, beta]), Elu ([alpha]),
// Celu ([alpha]), Selu ([alpha, gamma]) or Mish.
const fusedActAttrs = "activation:string= activation_params:floats"

// The attributes the prepack pass (passes/prepack.go) sets on a node whose
// constant weights it stored in the layout the kernel reads (the packed
// value is 1-D; the attribute keeps its ONNX shape). They are declared on
// the fused ops below and, by declarePackedAttrs, on the ONNX ops the pass
// packs (Conv, Gemm, MatMul), so the verifier checks their kind after the
// pass. templates/compiler_prepack.go names the same strings (a test in
// passes checks they agree).
//
//   - packed_w_shape (Conv, FusedConv): W in the SGEMM panel layout
//     (templates.PrepackConvWeights, NHWC: PrepackConvWeightsNHWC).
//   - winograd_w_shape (Conv, FusedConv): W as Winograd filter matrices,
//     F(4x4,3x3) (36 of them) or, NHWC only, F(2x2,3x3) (16): the tile is
//     the packed length over the weights' C*M.
//   - packed_b_shape (Gemm, MatMul, FusedGemm, FusedMatMul): the 2-D
//     constant B in sgemmPackB's layout.
//   - packed_q_shape (QGemm, QConv): B (W as [K, M]) in qgemmPackB's
//     panel layout, s8, with its column sums (reserved: the kernels pack
//     at run time today).
//   - packed_w_shapes (FusedConvChain): its weights (We, Wd, Wp, those
//     present) each packed like an NHWC FusedConv's; 4 ints per weight.
const (
	convPackedAttrs  = "packed_w_shape:ints winograd_w_shape:ints"
	gemmPackedAttrs  = "packed_b_shape:ints"
	chainPackedAttrs = "packed_w_shapes:ints"
	qgemmPackedAttrs = "packed_q_shape:ints"
)

// packedAttrOps lists the ONNX ops the prepack pass marks, with the
// attributes it may set on them.
var packedAttrOps = []struct{ op, attrs string }{
	{"Conv", convPackedAttrs},
	{"Gemm", gemmPackedAttrs},
	{"MatMul", gemmPackedAttrs},
}

// declarePackedAttrs adds packedAttrOps's attributes to the ONNX ops'
// schemas, at every version; the op table's init calls it once its rows
// are registered.
func declarePackedAttrs() {
	for _, d := range packedAttrOps {
		s := LookupOp("", d.op)
		if s == nil {
			panic("op table: packed attributes for unknown op " + d.op)
		}
		for _, f := range strings.Fields(d.attrs) {
			a, err := parseAttrSpec(f)
			if err != nil || s.AttrFor(a.Name, s.Versions[len(s.Versions)-1]) != nil {
				panic(fmt.Sprintf("op table: %s: packed attribute %q: %v (or declared twice)", d.op, f, err))
			}
			s.Attrs = append(s.Attrs, a)
		}
	}
}

var cuvilOpDefs = []opDef{
	{"FusedConv", "1", "X:T W:T B:T? Z:T? Into:T? Scale:T?", "Y:T", "T=$f",
		"auto_pad:string=NOTSET dilations:ints group:int=1 in_layout:string=NHWC kernel_shape:ints layout:string=NCHW out_channels:int=0 out_offset:int=0 pads:ints strides:ints " + fusedActAttrs + " residual_after_activation:int=0 " + convPackedAttrs, "",
		"Conv, plus bias B, plus residual Z (same shape as Y) added before the activation or after it, then activation; all in the GEMM epilogue. layout NHWC (2-D, float32, group 1 or depthwise): X is [N,H,W,C] ([N,C,H,W] with in_layout NCHW, group 1 only), Y and Z [N,H',W',M]; W keeps its ONNX shape. out_channels (NHWC, group 1, no Z; set by the concat-into pass): Y is [N,H',W',out_channels], the convolution writes channels [out_offset, out_offset+M), the others are Into's (same shape as Y, or fewer channels: Y's first ones) or, without Into, undefined. Scale (NHWC, group 1, pointwise; set by the fuse-se-gate pass): [N,1,1,C], the convolution reads X times Scale (a squeeze-excitation gate per image and input channel).", nil},
	{"FusedConvChain", "1", "X:T We:T? Be:T? Wd:T Bd:T? Wp:T? Bp:T? Z:T?", "Y:T", "T=f32",
		"auto_pad:string=NOTSET dilations:ints kernel_shape:ints pads:ints strides:ints dw_activation:string= dw_activation_params:floats expand_activation:string= expand_activation_params:floats " + fusedActAttrs + " residual_after_activation:int=0 " + chainPackedAttrs, "",
		"An NHWC inverted bottleneck in one pass over row bands (passes/fuse_convchain.go): expand 1x1 (We [Ce,C,1,1], Be; optional) -> depthwise (Wd [Ce,1,kh,kw], Bd; the window attributes are its) -> project 1x1 (Wp [M,Ce,1,1], Bp; optional), at least one of expand and project. X is [N,H,W,C], Y and Z [N,H',W',M] (M = Ce without project). expand_activation and dw_activation (the latter only before a project) are any fused activation (a clamp inside the stage, others as a row pass over its band); the last stage takes activation, Z and residual_after_activation as FusedConv does. Weights keep their ONNX shapes.", nil},
	{"FusedGemm", "1", "A:T B:T C:T? Z:T?", "Y:T", "T=$f",
		"alpha:float=1 beta:float=1 transA:int=0 transB:int=0 " + fusedActAttrs + " residual_after_activation:int=0 " + gemmPackedAttrs, "",
		"Gemm (alpha*A'*B' + beta*C), plus residual Z (same shape as Y) before or after the activation, then activation.", nil},
	{"FusedMatMul", "1", "A:T B:T bias:T? Z:T?", "Y:T", "T=$f",
		fusedActAttrs + " residual_after_activation:int=0 " + gemmPackedAttrs, "",
		"MatMul, plus bias (shape [N], along the last axis), plus residual Z (same shape as Y) before or after the activation, then activation.", nil},
	{"Gelu", "1", "X:T", "Y:T", "T=$f", "approximate:string=none", "ew",
		"x*0.5*(1+erf(x/sqrt(2))), or its tanh approximation when approximate is tanh.", nil},
	{"RoundHalf", "1", "X:T", "Y:T", "T=f32", "", "ew",
		"X rounded to the nearest IEEE half (ties to even) and widened back to float32: Cast(Cast(X, to=FLOAT16), to=FLOAT) in one pass (widen-half makes it where an fp16 model's Casts round its f32 compute).", nil},
	// The activations fuse-activation makes for opsets before ONNX has them.
	{"Swish", "1", "X:T", "Y:T", "T=$f", "alpha:float=1", "ew",
		"x*sigmoid(alpha*x) (ONNX Swish, opset 24) for older opsets; SiLU when alpha is 1.", nil},
	{"HardSwish", "1", "X:T", "Y:T", "T=$f", "", "ew",
		"x*max(0, min(1, x/6 + 1/2)) (ONNX HardSwish, opset 14) for older opsets.", nil},
	{"Mish", "1", "X:T", "Y:T", "T=$f", "", "ew",
		"x*tanh(softplus(x)) (ONNX Mish, opset 18) for older opsets.", nil},
	{"LayerNorm", "1", "X:T Scale:T B:T?", "Y:T", "T=$f", "axis:int=-1 epsilon:float=1e-05", "",
		"LayerNormalization (opset 17) for models of older opsets: normalises over the axes from axis on.", nil},
	{"SkipLayerNorm", "1", "X:T Skip:T Scale:T B:T?", "Y:T Sum:T?", "T=$f", "epsilon:float=1e-05", "",
		"LayerNorm(X + Skip) over the last axis; Sum, when asked for, is X + Skip.", nil},
	{"ScaleShift", "1", "X:T scale:T shift:T", "Y:T", "T=$f", fusedActAttrs + " channels:int=0 layout:string=NCHW", "",
		"activation(X*scale + shift) with scale and shift per channel (axis 1, shape [C]; the last axis with layout NHWC): an unfoldable BatchNormalization. channels (NHWC; set by the concat-into pass): X's rows are wider, Y has only their first channels.", nil},
	{"Attention", "1", "Q:T Kt:T V:T mask:T?", "Y:T", "T=$f", "scale:float=1 heads:int=0 head_size:int=0 v_head_size:int=0 offsets:ints seq_first:int=0", "",
		"softmax(scale * Q·Kt + mask) · V over the last two axes: Q [..., Sq, D], Kt (K transposed) [..., D, Sk], V [..., Sk, Dv] with the same leading dims; mask broadcasts to [..., Sq, Sk]. " +
			"With heads = H > 0: Q [B, Sq, Wq], K (not transposed) [B, Sk, Wk], V [B, Sk, Wv] ([S, B, W] with seq_first), head h at columns offsets[i] + h*head_size (v_head_size for V; default W/H); Y [B, Sq, H*Dv] ([Sq, B, H*Dv] with seq_first); mask broadcasts to [B, H, Sq, Sk].", nil},
	{"Elementwise", "1", "X:T...", "Y:T...", "T=f32,f64", "args:ints! consts:floats ops:strings! outputs:ints!", "ew",
		"A group of element-wise ops run as one loop (fuse-elementwise): instruction k applies ops[k] to its operands from args (one or two each, in order: r < #inputs is input r, r >= #inputs the result of instruction r-#inputs, r < 0 consts[-r-1]); output i is operand outputs[i]. X[0] has the outputs' shape; other inputs have it too or one element.", nil},
	// Integer GEMM and convolution (passes/quant.go; templates/k_quant_gemm.go).
	{"QGemm", "1", "A:T1 A_scale:F A_zero:T1? B:T2 B_scale:F B_zero:T2? bias:I? Y_scale:F? Y_zero:T3?", "Y:T4", "T1=u8,i8 T2=i8,u8 T3=u8,i8 T4=u8,i8,f32 F=f32 I=i32",
		"activation:string= activation_params:floats f32_multiplier:int=0 " + qgemmPackedAttrs, "",
		"Integer matrix product A [..., K] x B [K, N] -> Y [..., N]: acc = sum_k (A-A_zero)(B-B_zero) in int32 plus bias [N]; A_scale and A_zero are scalars, B_scale and B_zero scalars or [N] (per column). With Y_scale: Y = saturate(round_half_even(acc*A_scale*B_scale/Y_scale) + Y_zero) in Y_zero's dtype (u8 without it), the multiplier rounded to float32 step by step when f32_multiplier is 1 (QLinearMatMul's arithmetic), else in float64; without Y_scale: Y = float32(acc)*float32(A_scale*B_scale). activation is empty, Relu or Clip (activation_params [min, max]), applied as saturation bounds (Q(clip(x)) = clamp(Q(x)) as Q is monotone).", nil},
	{"QConv", "1", "X:T1 X_scale:F X_zero:T1? W:T2 W_scale:F W_zero:T2? bias:I? Y_scale:F? Y_zero:T3?", "Y:T4", "T1=u8,i8 T2=i8,u8 T3=u8,i8 T4=u8,i8,f32 F=f32 I=i32",
		"auto_pad:string=NOTSET dilations:ints group:int=1 kernel_shape:ints pads:ints strides:ints activation:string= activation_params:floats f32_multiplier:int=0 layout:string=NCHW " + qgemmPackedAttrs, "",
		"Integer 2-D convolution (group 1) of X [N,C,H,W] by W [M,C,kh,kw] into Y [N,M,OH,OW] with the Conv attributes (layout NHWC, set by the layout pass: X [N,H,W,C], W [M,kh,kw,C], Y [N,OH,OW,M]); W_scale, W_zero and bias per output channel or per tensor; the rest as QGemm (the GEMM's columns are the output channels).", nil},
	// The channel shuffle fuse-channel-shuffle makes (passes/shuffle.go).
	{"ChannelShuffle", "1", "X:T...", "Y:T", "T=$bc", "axis:int=1 groups:int!", "",
		"ShuffleNet's channel shuffle of the inputs' concatenation along axis (one input: X itself): its C channels (a multiple of groups g) viewed as [g, C/g] and transposed, so output channel c'*g + j is channel j*(C/g) + c' of the concatenation; Y has the concatenation's shape. The same as Concat -> Reshape [..., g, C/g, ...] -> Transpose of those two axes -> Reshape back (axis 1 for NCHW, 3 for the layout pass's NHWC).", nil},
	// The layout pass's pooling (passes/layout.go).
	{"PoolNHWC", "1", "X:T", "Y:T", "T=f32",
		"auto_pad:string=NOTSET ceil_mode:int=0 count_include_pad:int=0 dilations:ints kernel_shape:ints mode:string! pads:ints strides:ints", "",
		"MaxPool (mode max), AveragePool (avg) or GlobalAveragePool (global_avg) of X [N,H,W,C] into Y [N,H',W',C], with the ONNX ops' attributes.", nil},
}

func init() {
	for _, d := range cuvilOpDefs {
		s, err := parseOpDef(d)
		if err != nil {
			panic(err)
		}
		s.Domain = CuvilDomain
		register(s)
	}
}
