package ir

import (
	"fmt"
	"strconv"
	"strings"
)

// The default ONNX domain (ai.onnx), opsets 1 to 17 (ONNX 1.12), including
// operators later opsets removed or deprecated (Upsample, Scatter). Each
// entry gives every since_version, the formals and attributes of the latest
// version up to opset 17, the attributes older versions had (bounded by
// <N: versions before N, and >=N: versions from N), and the arity of older
// versions whose formals do not line up with the latest.
//
// The little languages, read by parseOpDef when the package loads:
//
//	in/out  name:L      one value of constraint letter L
//	        name:L?     optional
//	        name:L...   variadic (last only), values share one dtype
//	        name:L[]    variadic, heterogeneous (Loop, Scan, If)
//	        name:L?...  zero or more
//	types   L=dtypes    comma list of dtypes and $sets
//	        L=seq:dts   sequences of tensors of those dtypes;
//	        L=t,seq,opt:dts for several kinds (map: maps, whose
//	        dtypes are the values'; shape rules check the keys)
//	attrs   name:kind[=default][!][<N][>=N]  (! = required; list defaults
//	        are comma separated)
//
// A row is {name, versions, in, out, types, attrs, flags, doc, older};
// rows that would run past ~150 characters use keyed fields, one group a
// line (name and versions; in, out and types; attrs and flags; doc; older).
var opDefs = []opDef{
	{"Abs", "1 6 13", "X:T", "Y:T", "T=$nb", "consumed_inputs:ints<6", "ew", "Absolute value.", nil},
	{"Acos", "7 22", "input:T", "output:T", "T=$fb", "", "ew", "Arccosine.", nil},
	{"Acosh", "9 22", "input:T", "output:T", "T=$fb", "", "ew", "Hyperbolic arccosine.", nil},
	{name: "Add", versions: "1 6 7 13 14", in: "A:T B:T", out: "C:T", types: "T=$nb",
		attrs: "axis:int<7 broadcast:int=0<7 consumed_inputs:ints<6", flags: "ew comm",
		doc: "Sum with multidirectional broadcasting."},
	{name: "AffineGrid", versions: "20", in: "theta:T1 size:T2", out: "grid:T1", types: "T1=$fb T2=i64",
		attrs: "align_corners:int=0",
		doc:   "Sampling grid of normalised coordinates from affine matrices."},
	{"And", "1 7", "A:T B:T", "C:T1", "T=bool T1=bool", "axis:int<7 broadcast:int=0<7", "ew comm", "Logical and.", nil},
	{name: "ArgMax", versions: "1 11 12 13", in: "data:T", out: "reduced:I", types: "T=$nb I=i64",
		attrs: "axis:int=0 keepdims:int=1 select_last_index:int=0>=12",
		doc:   "Indices of the maximum along an axis."},
	{name: "ArgMin", versions: "1 11 12 13", in: "data:T", out: "reduced:I", types: "T=$nb I=i64",
		attrs: "axis:int=0 keepdims:int=1 select_last_index:int=0>=12",
		doc:   "Indices of the minimum along an axis."},
	{"Asin", "7 22", "input:T", "output:T", "T=$fb", "", "ew", "Arcsine.", nil},
	{"Asinh", "9 22", "input:T", "output:T", "T=$fb", "", "ew", "Hyperbolic arcsine.", nil},
	{"Atan", "7 22", "input:T", "output:T", "T=$fb", "", "ew", "Arctangent.", nil},
	{"Atanh", "9 22", "input:T", "output:T", "T=$fb", "", "ew", "Hyperbolic arctangent.", nil},
	{name: "Attention", versions: "23 24",
		in: "Q:T1 K:T1 V:T2 attn_mask:U? past_key:T1? past_value:T2? nonpad_kv_seqlen:I?", out: "Y:T1 present_key:T1? present_value:T2? qk_matmul_output:T1?", types: "T1=$fb T2=$fb U=bool,$fb I=i64",
		attrs: "is_causal:int=0 kv_num_heads:int q_num_heads:int qk_matmul_output_mode:int=0 scale:float softcap:float=0 softmax_precision:int",
		doc:   "Scaled dot-product attention with GQA, masks and a KV cache.",
		older: []OlderArity{{Until: 24, MinIn: 3, MaxIn: 6, MinOut: 1, MaxOut: 4}}},
	{name: "AveragePool", versions: "1 7 10 11 19 22", in: "X:T", out: "Y:T", types: "T=$fb",
		attrs: "auto_pad:string=NOTSET ceil_mode:int=0>=10 count_include_pad:int=0>=7 dilations:ints>=19 kernel_shape:ints! pads:ints strides:ints",
		doc:   "Average pooling over spatial windows."},
	{name: "BatchNormalization", versions: "1 6 7 9 14 15",
		in: "X:T scale:T1 B:T1 input_mean:T2 input_var:T2", out: "Y:T running_mean:T2? running_var:T2?", types: "T=$fb T1=$fb T2=$fb",
		attrs: "consumed_inputs:ints<6 epsilon:float=1e-05 is_test:int=0<7 momentum:float=0.9 spatial:int=1<9 training_mode:int=0>=14",
		doc:   "Batch normalization with given or running statistics.",
		older: []OlderArity{{Until: 14, MinIn: 5, MaxIn: 5, MinOut: 1, MaxOut: 5}}},
	{name: "Bernoulli", versions: "15 22", in: "input:T1", out: "output:T2", types: "T1=$fb T2=$nb,bool",
		attrs: "dtype:int seed:float",
		doc:   "Draws binary samples with the given probabilities."},
	{name: "BitCast", versions: "26", in: "input:T1", out: "output:T2", types: "T1=$bc T2=$bc",
		attrs: "to:int!",
		doc:   "Reinterprets the bits of each element as another dtype of the same width."},
	{"BitShift", "11", "X:T Y:T", "Z:T", "T=u8,u16,u32,u64", "direction:string!", "ew", "Bitwise shift left or right.", nil},
	{"BitwiseAnd", "18", "A:T B:T", "C:T", "T=$i", "", "ew comm", "Bitwise and with multidirectional broadcasting.", nil},
	{"BitwiseNot", "18", "X:T", "Y:T", "T=$i", "", "ew", "Bitwise not.", nil},
	{"BitwiseOr", "18", "A:T B:T", "C:T", "T=$i", "", "ew comm", "Bitwise or with multidirectional broadcasting.", nil},
	{"BitwiseXor", "18", "A:T B:T", "C:T", "T=$i", "", "ew comm", "Bitwise exclusive or with multidirectional broadcasting.", nil},
	{name: "BlackmanWindow", versions: "17", in: "size:T1", out: "output:T2", types: "T1=i32,i64 T2=$nb",
		attrs: "output_datatype:int=1 periodic:int=1",
		doc:   "Blackman window of a given size."},
	{name: "Cast", versions: "1 6 9 13 19 21 23 24 25", in: "input:T1", out: "output:T2", types: "T1=$all T2=$all",
		attrs: "round_mode:string=up>=24 saturate:int=1>=19 to:string!<6 to:int!>=6", flags: "ew",
		doc: "Converts elements to another dtype."},
	{name: "CastLike", versions: "15 19 21 23 24 25", in: "input:T1 target_type:T2", out: "output:T2", types: "T1=$all T2=$all",
		attrs: "round_mode:string=up>=24 saturate:int=1>=19", flags: "ew",
		doc: "Converts elements to the dtype of a second input."},
	{name: "CausalConvWithState", versions: "27", in: "input:T weight:T bias:T? past_state:T?", out: "output:T present_state:T", types: "T=$fb",
		attrs: "activation:string=none",
		doc:   "Causal depthwise 1-D convolution carrying its left context as state."},
	{name: "CenterCropPad", versions: "18", in: "input_data:T shape:I", out: "output_data:T", types: "T=$all I=i32,i64",
		attrs: "axes:ints",
		doc:   "Center-crops or pads a tensor to a shape."},
	{"Ceil", "1 6 13", "X:T", "Y:T", "T=$fb", "consumed_inputs:ints<6", "ew", "Rounds up.", nil},
	{"Celu", "12", "X:T", "Y:T", "T=f32", "alpha:float=1", "ew", "Continuously differentiable exponential linear unit.", nil},
	{name: "Clip", versions: "1 6 11 12 13", in: "input:T min:T? max:T?", out: "output:T", types: "T=$nb",
		attrs: "consumed_inputs:ints<6 max:float<11 min:float<11", flags: "ew",
		doc:   "Limits values to [min, max].",
		older: []OlderArity{{Until: 11, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1}}},
	{name: "Col2Im", versions: "18", in: "input:T image_shape:I block_shape:I", out: "output:T", types: "T=$all I=i64",
		attrs: "dilations:ints pads:ints strides:ints",
		doc:   "Rearranges column blocks into an image (inverse of im2col)."},
	{"Compress", "9 11", "input:T condition:T1", "output:T", "T=$all T1=bool", "axis:int", "", "Selects slices where a condition is true.", nil},
	{"Concat", "1 4 11 13", "inputs:T...", "concat_result:T", "T=$all", "axis:int=1<4 axis:int!>=4", "", "Joins tensors along an axis.", nil},
	{name: "ConcatFromSequence", versions: "11", in: "input_sequence:S", out: "concat_result:T", types: "S=seq:$all T=$all",
		attrs: "axis:int! new_axis:int=0",
		doc:   "Joins the tensors of a sequence along an axis."},
	{name: "Constant", versions: "1 9 11 12 13 19 21 23 24 25", out: "output:T", types: "T=$all",
		attrs: "sparse_value:tensor>=11 value:tensor value_float:float>=12 value_floats:floats>=12 value_int:int>=12 value_ints:ints>=12 value_string:string>=12 value_strings:strings>=12",
		doc:   "A constant tensor."},
	{name: "ConstantOfShape", versions: "9 20 21 23 24 25", in: "input:T1", out: "output:T2", types: "T1=i64 T2=$nb,bool",
		attrs: "value:tensor",
		doc:   "Tensor of a given shape filled with one value."},
	{name: "Conv", versions: "1 11 22", in: "X:T W:T B:T?", out: "Y:T", types: "T=$fb",
		attrs: "auto_pad:string=NOTSET dilations:ints group:int=1 kernel_shape:ints pads:ints strides:ints",
		doc:   "Convolution."},
	{name: "ConvInteger", versions: "10", in: "x:T1 w:T2 x_zero_point:T1? w_zero_point:T2?", out: "y:T3", types: "T1=i8,u8 T2=i8,u8 T3=i32",
		attrs: "auto_pad:string=NOTSET dilations:ints group:int=1 kernel_shape:ints pads:ints strides:ints",
		doc:   "Integer convolution with zero points."},
	{name: "ConvTranspose", versions: "1 11 22", in: "X:T W:T B:T?", out: "Y:T", types: "T=$fb",
		attrs: "auto_pad:string=NOTSET dilations:ints group:int=1 kernel_shape:ints output_padding:ints output_shape:ints pads:ints strides:ints",
		doc:   "Transposed convolution."},
	{"Cos", "7 22", "input:T", "output:T", "T=$fb", "", "ew", "Cosine.", nil},
	{"Cosh", "9 22", "input:T", "output:T", "T=$fb", "", "ew", "Hyperbolic cosine.", nil},
	{name: "CumProd", versions: "26", in: "x:T axis:T2", out: "y:T", types: "T=u32,u64,i32,i64,$fb T2=i32,i64",
		attrs: "exclusive:int=0 reverse:int=0",
		doc:   "Cumulative product along an axis."},
	{name: "CumSum", versions: "11 14", in: "x:T axis:T2", out: "y:T", types: "T=u32,u64,i32,i64,$fb T2=i32,i64",
		attrs: "exclusive:int=0 reverse:int=0",
		doc:   "Cumulative sum along an axis."},
	{name: "DFT", versions: "17 20", in: "input:T1 dft_length:T2? axis:I?", out: "output:T1", types: "T1=$fb T2=i32,i64 I=i64",
		attrs: "axis:int=1<20 inverse:int=0 onesided:int=0",
		doc:   "Discrete Fourier transform.",
		older: []OlderArity{{Until: 20, MinIn: 1, MaxIn: 2, MinOut: 1, MaxOut: 1}}},
	{name: "DeformConv", versions: "19 22", in: "X:T W:T offset:T B:T? mask:T?", out: "Y:T", types: "T=$fb",
		attrs: "dilations:ints group:int=1 kernel_shape:ints offset_group:int=1 pads:ints strides:ints",
		doc:   "Deformable convolution: each kernel tap samples at a learned offset."},
	{name: "DepthToSpace", versions: "1 11 13", in: "input:T", out: "output:T", types: "T=$all",
		attrs: "blocksize:int! mode:string=DCR>=11",
		doc:   "Moves depth blocks into spatial blocks."},
	{name: "DequantizeLinear", versions: "10 13 19 21 23 24 25",
		in: "x:T1 x_scale:T2 x_zero_point:T1?", out: "y:T3", types: "T1=$q,i32 T2=f32,f16,bf16,f64,f8e8m0 T3=f32,f16,bf16,f64",
		attrs: "axis:int=1>=13 block_size:int=0>=21 output_dtype:int=0>=23",
		doc:   "Converts quantized integers or small floats to float."},
	{"Det", "11 22", "X:T", "Y:T", "T=$fb", "", "", "Determinant of square matrices.", nil},
	{name: "Div", versions: "1 6 7 13 14", in: "A:T B:T", out: "C:T", types: "T=$nb",
		attrs: "axis:int<7 broadcast:int=0<7 consumed_inputs:ints<6", flags: "ew",
		doc: "Quotient with multidirectional broadcasting."},
	{name: "Dropout", versions: "1 6 7 10 12 13 22",
		in: "data:T ratio:T1? training_mode:T2?", out: "output:T mask:T2?", types: "T=$fb T1=$fb T2=bool",
		attrs: "consumed_inputs:ints<6 is_test:int=0<7 ratio:float=0.5<12 seed:int>=12",
		doc:   "Randomly zeroes elements when training; identity otherwise.",
		older: []OlderArity{{Until: 12, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 2}}},
	{name: "DynamicQuantizeLinear", versions: "11", in: "x:T1", out: "y:T2 y_scale:F y_zero_point:T2", types: "T1=f32 T2=u8 F=f32",
		doc: "Quantizes to uint8 with computed scale and zero point."},
	{"Einsum", "12", "Inputs:T...", "Output:T", "T=$n", "equation:string!", "", "Einstein summation.", nil},
	{"Elu", "1 6 22", "X:T", "Y:T", "T=$fb", "alpha:float=1 consumed_inputs:ints<6", "ew", "Exponential linear unit.", nil},
	{name: "Equal", versions: "1 7 11 13 19", in: "A:T B:T", out: "C:T1", types: "T=$nb,bool,string T1=bool",
		attrs: "axis:int<7 broadcast:int=0<7", flags: "ew comm",
		doc: "Elementwise equality."},
	{"Erf", "9 13", "input:T", "output:T", "T=$nb", "", "ew", "Error function.", nil},
	{"Exp", "1 6 13", "input:T", "output:T", "T=$fb", "consumed_inputs:ints<6", "ew", "Exponential.", nil},
	{"Expand", "8 13", "input:T shape:I", "output:T", "T=$all I=i64", "", "", "Broadcasts a tensor to a shape.", nil},
	{"EyeLike", "9 22", "input:T1", "output:T2", "T1=$nb,bool T2=$nb,bool", "dtype:int k:int=0", "", "2-D tensor with ones on a diagonal.", nil},
	{"Flatten", "1 9 11 13 21 23 24 25", "input:T", "output:T", "T=$all", "axis:int=1", "", "Reshapes to 2-D around an axis.", nil},
	{"Floor", "1 6 13", "X:T", "Y:T", "T=$fb", "consumed_inputs:ints<6", "ew", "Rounds down.", nil},
	{name: "GRU", versions: "1 3 7 14 22", in: "X:T W:T R:T B:T? sequence_lens:T1? initial_h:T?", out: "Y:T? Y_h:T?", types: "T=$fb T1=i32",
		attrs: "activation_alpha:floats activation_beta:floats activations:strings clip:float direction:string=forward hidden_size:int layout:int=0>=14 linear_before_reset:int=0>=3 output_sequence:int=0<7",
		doc:   "Gated recurrent unit layer."},
	{"Gather", "1 11 13", "data:T indices:I", "output:T", "T=$all I=i32,i64", "axis:int=0", "", "Gathers slices along an axis by index.", nil},
	{name: "GatherElements", versions: "11 13", in: "data:T indices:I", out: "output:T", types: "T=$all I=i32,i64",
		attrs: "axis:int=0",
		doc:   "Gathers elements along an axis by an index tensor."},
	{name: "GatherND", versions: "11 12 13", in: "data:T indices:I", out: "output:T", types: "T=$all I=i64",
		attrs: "batch_dims:int=0>=12",
		doc:   "Gathers slices by N-dimensional indices."},
	{"Gelu", "20", "X:T", "Y:T", "T=$fb", "approximate:string=none", "ew", "Gaussian error linear unit (exact or tanh approximation).", nil},
	{name: "Gemm", versions: "1 6 7 9 11 13", in: "A:T B:T C:T?", out: "Y:T", types: "T=$fb,u32,u64,i32,i64",
		attrs: "alpha:float=1 beta:float=1 broadcast:int=0<7 transA:int=0 transB:int=0",
		doc:   "General matrix multiply: alpha*A'*B' + beta*C.",
		older: []OlderArity{{Until: 11, MinIn: 3, MaxIn: 3, MinOut: 1, MaxOut: 1}}},
	{"GlobalAveragePool", "1 22", "X:T", "Y:T", "T=$fb", "", "", "Average over all spatial positions.", nil},
	{"GlobalLpPool", "1 2 22", "X:T", "Y:T", "T=$fb", "p:float=2<2 p:int=2>=2", "", "Lp norm over all spatial positions.", nil},
	{"GlobalMaxPool", "1 22", "X:T", "Y:T", "T=$fb", "", "", "Maximum over all spatial positions.", nil},
	{"Greater", "1 7 9 13", "A:T B:T", "C:T1", "T=$nb T1=bool", "axis:int<7 broadcast:int=0<7", "ew", "Elementwise a > b.", nil},
	{"GreaterOrEqual", "12 16", "A:T B:T", "C:T1", "T=$nb T1=bool", "", "ew", "Elementwise a >= b.", nil},
	{name: "GridSample", versions: "16 20 22", in: "X:T1 grid:T2", out: "Y:T1", types: "T1=$all T2=$fb",
		attrs: "align_corners:int=0 mode:string=bilinear<20 mode:string=linear>=20 padding_mode:string=zeros",
		doc:   "Samples an input at grid locations."},
	{name: "GroupNormalization", versions: "18 21", in: "X:T scale:T bias:T", out: "Y:T", types: "T=$fb",
		attrs: "epsilon:float=1e-05 num_groups:int! stash_type:int=1>=21",
		doc:   "Normalizes over groups of channels."},
	{name: "HammingWindow", versions: "17", in: "size:T1", out: "output:T2", types: "T1=i32,i64 T2=$nb",
		attrs: "output_datatype:int=1 periodic:int=1",
		doc:   "Hamming window of a given size."},
	{name: "HannWindow", versions: "17", in: "size:T1", out: "output:T2", types: "T1=i32,i64 T2=$nb",
		attrs: "output_datatype:int=1 periodic:int=1",
		doc:   "Hann window of a given size."},
	{name: "HardSigmoid", versions: "1 6 22", in: "X:T", out: "Y:T", types: "T=$fb",
		attrs: "alpha:float=0.2 beta:float=0.5 consumed_inputs:ints<6", flags: "ew",
		doc: "max(0, min(1, alpha*x + beta))."},
	{"HardSwish", "14 22", "X:T", "Y:T", "T=$fb", "", "ew", "x * max(0, min(1, x/6 + 1/2)).", nil},
	{"Hardmax", "1 11 13", "input:T", "output:T", "T=$fb", "axis:int=1<13 axis:int=-1>=13", "", "One-hot of the maximum along an axis.", nil},
	{"Identity", "1 13 14 16 19 21 23 24 25", "input:V", "output:V", "V=t,seq,opt:$all", "", "ew", "Copies its input.", nil},
	{name: "If", versions: "1 11 13 16 19 21 23 24 25", in: "cond:B", out: "outputs:V[]", types: "B=bool V=t,seq,opt:$all",
		attrs: "else_branch:graph! then_branch:graph!",
		doc:   "Runs one of two subgraphs."},
	{name: "ImageDecoder", versions: "20", in: "encoded_stream:T1", out: "image:T2", types: "T1=u8 T2=u8",
		attrs: "pixel_format:string=RGB",
		doc:   "Decodes an encoded image (PNG, JPEG, GIF, BMP, PNM) to [H, W, C] uint8."},
	{name: "InstanceNormalization", versions: "1 6 22", in: "input:T scale:T B:T", out: "output:T", types: "T=$fb",
		attrs: "consumed_inputs:ints<6 epsilon:float=1e-05",
		doc:   "Normalizes each instance and channel."},
	{"IsInf", "10 20", "X:T1", "Y:T2", "T1=$fb T2=bool", "detect_negative:int=1 detect_positive:int=1", "ew", "Elementwise test for infinity.", nil},
	{"IsNaN", "9 13 20", "X:T1", "Y:T2", "T1=$fb T2=bool", "", "ew", "Elementwise test for NaN.", nil},
	{name: "LRN", versions: "1 13", in: "X:T", out: "Y:T", types: "T=$fb",
		attrs: "alpha:float=0.0001 beta:float=0.75 bias:float=1 size:int!",
		doc:   "Local response normalization across channels."},
	{name: "LSTM", versions: "1 7 14 22",
		in: "X:T W:T R:T B:T? sequence_lens:T1? initial_h:T? initial_c:T? P:T?", out: "Y:T? Y_h:T? Y_c:T?", types: "T=$fb T1=i32",
		attrs: "activation_alpha:floats activation_beta:floats activations:strings clip:float direction:string=forward hidden_size:int input_forget:int=0 layout:int=0>=14 output_sequence:int=0<7",
		doc:   "Long short-term memory layer."},
	{name: "LayerNormalization", versions: "17", in: "X:T Scale:T B:T?", out: "Y:T Mean:U? InvStdDev:U?", types: "T=$fb U=f32,bf16",
		attrs: "axis:int=-1 epsilon:float=1e-05 stash_type:int=1",
		doc:   "Normalizes over the trailing axes."},
	{"LeakyRelu", "1 6 16", "X:T", "Y:T", "T=$fb", "alpha:float=0.01 consumed_inputs:ints<6", "ew", "x if x >= 0 else alpha*x.", nil},
	{"Less", "1 7 9 13", "A:T B:T", "C:T1", "T=$nb T1=bool", "axis:int<7 broadcast:int=0<7", "ew", "Elementwise a < b.", nil},
	{"LessOrEqual", "12 16", "A:T B:T", "C:T1", "T=$nb T1=bool", "", "ew", "Elementwise a <= b.", nil},
	{name: "LinearAttention", versions: "27",
		in: "query:T key:T value:T past_state:S? decay:T? beta:T? erase_gate:T?", out: "output:T present_state:S", types: "T=$fb S=$fb",
		attrs: "chunk_size:int=64 kv_num_heads:int! q_num_heads:int! scale:float=0 update_rule:string=gated_delta",
		doc:   "Recurrent linear attention (linear, gated, delta, gated delta rules) with a state."},
	{"Log", "1 6 13", "input:T", "output:T", "T=$fb", "consumed_inputs:ints<6", "ew", "Natural logarithm.", nil},
	{"LogSoftmax", "1 11 13", "input:T", "output:T", "T=$fb", "axis:int=1<13 axis:int=-1>=13", "", "Log of softmax along an axis.", nil},
	{name: "Loop", versions: "1 11 13 16 19 21 23 24 25",
		in: "M:I? cond:B? v_initial:V?[]", out: "v_final_and_scan_outputs:V[]", types: "I=i64 B=bool V=t,seq,opt:$all",
		attrs: "body:graph!",
		doc:   "Runs a subgraph while a condition holds, up to M times."},
	{"LpNormalization", "1 22", "input:T", "output:T", "T=$fb", "axis:int=-1 p:int=2", "", "Lp-normalizes along an axis.", nil},
	{name: "LpPool", versions: "1 2 11 18 22", in: "X:T", out: "Y:T", types: "T=$fb",
		attrs: "auto_pad:string=NOTSET ceil_mode:int=0>=18 dilations:ints>=18 kernel_shape:ints!>=2 kernel_shape:ints<2 p:float=2<2 p:int=2>=2 pads:ints strides:ints",
		doc:   "Lp norm pooling over spatial windows."},
	{"MatMul", "1 9 13", "A:T B:T", "Y:T", "T=$fb,u32,u64,i32,i64", "", "", "Matrix product with numpy semantics.", nil},
	{name: "MatMulInteger", versions: "10", in: "A:T1 B:T2 a_zero_point:T1? b_zero_point:T2?", out: "Y:T3", types: "T1=i8,u8 T2=i8,u8 T3=i32",
		doc: "Integer matrix product with zero points."},
	{"Max", "1 6 8 12 13", "data_0:T...", "max:T", "T=$nb", "consumed_inputs:ints<6", "ew comm", "Elementwise maximum of the inputs.", nil},
	{name: "MaxPool", versions: "1 8 10 11 12 22", in: "X:T", out: "Y:T Indices:I?", types: "T=$fb,i8,u8 I=i64",
		attrs: "auto_pad:string=NOTSET ceil_mode:int=0>=10 dilations:ints>=10 kernel_shape:ints! pads:ints storage_order:int=0>=8 strides:ints",
		doc:   "Maximum pooling over spatial windows."},
	{name: "MaxRoiPool", versions: "1 22", in: "X:T rois:T", out: "Y:T", types: "T=$fb",
		attrs: "pooled_shape:ints! spatial_scale:float=1",
		doc:   "Max pooling over regions of interest."},
	{name: "MaxUnpool", versions: "9 11 22", in: "X:T1 I:T2 output_shape:T2?", out: "output:T1", types: "T1=$fb T2=i64",
		attrs: "kernel_shape:ints! pads:ints strides:ints",
		doc:   "Partial inverse of MaxPool."},
	{"Mean", "1 6 8 13", "data_0:T...", "mean:T", "T=$fb", "consumed_inputs:ints<6", "ew comm", "Elementwise mean of the inputs.", nil},
	{"MeanVarianceNormalization", "9 13", "X:T", "Y:T", "T=$fb", "axes:ints=0,2,3", "", "Normalizes to zero mean and unit variance over axes.", nil},
	{name: "MelWeightMatrix", versions: "17",
		in: "num_mel_bins:T1 dft_length:T1 sample_rate:T1 lower_edge_hertz:T2 upper_edge_hertz:T2", out: "output:T3", types: "T1=i32,i64 T2=$fb T3=$nb",
		attrs: "output_datatype:int=1",
		doc:   "Mel filter bank matrix."},
	{"Min", "1 6 8 12 13", "data_0:T...", "min:T", "T=$nb", "consumed_inputs:ints<6", "ew comm", "Elementwise minimum of the inputs.", nil},
	{"Mish", "18 22", "X:T", "Y:T", "T=$fb", "", "ew", "x * tanh(softplus(x)).", nil},
	{"Mod", "10 13", "A:T B:T", "C:T", "T=$nb", "fmod:int=0", "ew", "Remainder (integer or fmod semantics).", nil},
	{name: "Mul", versions: "1 6 7 13 14", in: "A:T B:T", out: "C:T", types: "T=$nb",
		attrs: "axis:int<7 broadcast:int=0<7 consumed_inputs:ints<6", flags: "ew comm",
		doc: "Product with multidirectional broadcasting."},
	{name: "Multinomial", versions: "7 22", in: "input:T1", out: "output:T2", types: "T1=$fb T2=i32,i64",
		attrs: "dtype:int=6 sample_size:int=1 seed:float",
		doc:   "Samples from multinomial distributions."},
	{"Neg", "1 6 13", "X:T", "Y:T", "T=f32,i32,i8,i16,i64,f16,f64,bf16", "consumed_inputs:ints<6", "ew", "Negation.", nil},
	{name: "NegativeLogLikelihoodLoss", versions: "12 13 22", in: "input:T target:Tind weight:T?", out: "loss:T", types: "T=$fb Tind=i32,i64",
		attrs: "ignore_index:int reduction:string=mean",
		doc:   "Negative log likelihood loss."},
	{name: "NonMaxSuppression", versions: "10 11",
		in: "boxes:F scores:F max_output_boxes_per_class:I? iou_threshold:F? score_threshold:F?", out: "selected_indices:I", types: "F=f32 I=i64",
		attrs: "center_point_box:int=0",
		doc:   "Selects boxes by score, pruning overlaps."},
	{"NonZero", "9 13", "X:T", "Y:I", "T=$all I=i64", "", "", "Indices of the non-zero elements.", nil},
	{"Not", "1", "X:T", "Y:T", "T=bool", "", "ew", "Logical not.", nil},
	{"OneHot", "9 11", "indices:T1 depth:T2 values:T3", "output:T3", "T1=$n T2=$n T3=$all", "axis:int=-1", "", "One-hot encoding.", nil},
	{name: "Optional", versions: "15", in: "input:V?", out: "output:O", types: "V=t,seq:$all O=opt:$all",
		attrs: "type:type",
		doc:   "Makes an optional value, empty or holding the input."},
	{name: "OptionalGetElement", versions: "15 18", in: "input:O", out: "output:V", types: "O=opt,t,seq:$all V=t,seq:$all",
		doc:   "The value an optional holds (from 18, a tensor or sequence is itself).",
		older: []OlderArity{{Until: 18, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1}}},
	{name: "OptionalHasElement", versions: "15 18", in: "input:O?", out: "output:B", types: "O=opt,t,seq:$all B=bool",
		doc:   "Whether an optional holds a value (from 18, no input: false; a tensor or sequence: true).",
		older: []OlderArity{{Until: 18, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1}}},
	{"Or", "1 7", "A:T B:T", "C:T1", "T=bool T1=bool", "axis:int<7 broadcast:int=0<7", "ew comm", "Logical or.", nil},
	{"PRelu", "1 6 7 9 16", "X:T slope:T", "Y:T", "T=$fb,u32,u64,i32,i64", "consumed_inputs:ints<6", "ew", "x if x >= 0 else slope*x.", nil},
	{name: "Pad", versions: "1 2 11 13 18 19 21 23 24 25",
		in: "data:T pads:I constant_value:T? axes:A?", out: "output:T", types: "T=$all I=i64 A=i32,i64",
		attrs: "mode:string=constant paddings:ints<2 pads:ints>=2<11 value:float=0<11",
		doc:   "Pads a tensor (constant, reflect, edge or wrap).",
		older: []OlderArity{{Until: 11, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1}}},
	{"Pow", "1 7 12 13 15", "X:T Y:T1", "Z:T", "T=i32,i64,$fb T1=$nb", "axis:int<7 broadcast:int=0<7", "ew", "x raised to the power y.", nil},
	{name: "QLinearConv", versions: "10",
		in: "x:T1 x_scale:F x_zero_point:T1 w:T2 w_scale:F w_zero_point:T2 y_scale:F y_zero_point:T3 B:T4?", out: "y:T3", types: "T1=i8,u8 T2=i8,u8 T3=i8,u8 T4=i32 F=f32",
		attrs: "auto_pad:string=NOTSET dilations:ints group:int=1 kernel_shape:ints pads:ints strides:ints",
		doc:   "Quantized convolution."},
	{name: "QLinearMatMul", versions: "10 21",
		in: "a:T1 a_scale:F a_zero_point:T1 b:T2 b_scale:F b_zero_point:T2 y_scale:F y_zero_point:T3", out: "y:T3", types: "T1=i8,u8 T2=i8,u8 T3=i8,u8 F=f32,f16,bf16",
		doc: "Quantized matrix product."},
	{name: "QuantizeLinear", versions: "10 13 19 21 23 24 25",
		in: "x:T1 y_scale:F y_zero_point:T2?", out: "y:T2", types: "T1=f32,f16,bf16,f64,i32 F=f32,f16,bf16,f64,i32,f8e8m0 T2=$q",
		attrs: "axis:int=1>=13 block_size:int=0>=21 output_dtype:int=0>=21 precision:int=0>=23 saturate:int=1>=19",
		doc:   "Converts to quantized integers or small floats."},
	{name: "RMSNormalization", versions: "23", in: "X:T scale:V", out: "Y:V", types: "T=$fb V=$fb",
		attrs: "axis:int=-1 epsilon:float=1e-05 stash_type:int=1",
		doc:   "Root-mean-square normalization over the trailing axes."},
	{name: "RNN", versions: "1 7 14 22", in: "X:T W:T R:T B:T? sequence_lens:T1? initial_h:T?", out: "Y:T? Y_h:T?", types: "T=$fb T1=i32",
		attrs: "activation_alpha:floats activation_beta:floats activations:strings=Tanh,Tanh clip:float direction:string=forward hidden_size:int layout:int=0>=14 output_sequence:int=0<7",
		doc:   "Simple recurrent layer."},
	{name: "RandomNormal", versions: "1 22", out: "output:T", types: "T=$fb",
		attrs: "dtype:int=1 mean:float=0 scale:float=1 seed:float shape:ints!",
		doc:   "Tensor of normal random samples."},
	{name: "RandomNormalLike", versions: "1 22", in: "input:T1", out: "output:T2", types: "T1=$all T2=$fb",
		attrs: "dtype:int mean:float=0 scale:float=1 seed:float",
		doc:   "Normal random samples shaped like the input."},
	{name: "RandomUniform", versions: "1 22", out: "output:T", types: "T=$fb",
		attrs: "dtype:int=1 high:float=1 low:float=0 seed:float shape:ints!",
		doc:   "Tensor of uniform random samples."},
	{name: "RandomUniformLike", versions: "1 22", in: "input:T1", out: "output:T2", types: "T1=$all T2=$fb",
		attrs: "dtype:int high:float=1 low:float=0 seed:float",
		doc:   "Uniform random samples shaped like the input."},
	{name: "Range", versions: "11 27", in: "start:T limit:T delta:T", out: "output:T", types: "T=f32,f64,i16,i32,i64,f16,bf16",
		doc: "Sequence of numbers from start to limit by delta."},
	{"Reciprocal", "1 6 13", "X:T", "Y:T", "T=$fb", "consumed_inputs:ints<6", "ew", "1/x.", nil},
	{name: "ReduceL1", versions: "1 11 13 18", in: "data:T axes:I?", out: "reduced:T", types: "T=$red I=i64",
		attrs: "axes:ints<18 keepdims:int=1 noop_with_empty_axes:int=0>=18",
		doc:   "L1 norm over axes.",
		older: []OlderArity{{Until: 18, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1}}},
	{name: "ReduceL2", versions: "1 11 13 18", in: "data:T axes:I?", out: "reduced:T", types: "T=$red I=i64",
		attrs: "axes:ints<18 keepdims:int=1 noop_with_empty_axes:int=0>=18",
		doc:   "L2 norm over axes.",
		older: []OlderArity{{Until: 18, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1}}},
	{name: "ReduceLogSum", versions: "1 11 13 18", in: "data:T axes:I?", out: "reduced:T", types: "T=$red I=i64",
		attrs: "axes:ints<18 keepdims:int=1 noop_with_empty_axes:int=0>=18",
		doc:   "Log of the sum over axes.",
		older: []OlderArity{{Until: 18, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1}}},
	{name: "ReduceLogSumExp", versions: "1 11 13 18", in: "data:T axes:I?", out: "reduced:T", types: "T=$red I=i64",
		attrs: "axes:ints<18 keepdims:int=1 noop_with_empty_axes:int=0>=18",
		doc:   "Log of the sum of exponentials over axes.",
		older: []OlderArity{{Until: 18, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1}}},
	{name: "ReduceMax", versions: "1 11 12 13 18 20", in: "data:T axes:I?", out: "reduced:T", types: "T=$red,i8,u8,bool I=i64",
		attrs: "axes:ints<18 keepdims:int=1 noop_with_empty_axes:int=0>=18",
		doc:   "Maximum over axes.",
		older: []OlderArity{{Until: 18, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1}}},
	{name: "ReduceMean", versions: "1 11 13 18", in: "data:T axes:I?", out: "reduced:T", types: "T=$red I=i64",
		attrs: "axes:ints<18 keepdims:int=1 noop_with_empty_axes:int=0>=18",
		doc:   "Mean over axes.",
		older: []OlderArity{{Until: 18, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1}}},
	{name: "ReduceMin", versions: "1 11 12 13 18 20", in: "data:T axes:I?", out: "reduced:T", types: "T=$red,i8,u8,bool I=i64",
		attrs: "axes:ints<18 keepdims:int=1 noop_with_empty_axes:int=0>=18",
		doc:   "Minimum over axes.",
		older: []OlderArity{{Until: 18, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1}}},
	{name: "ReduceProd", versions: "1 11 13 18", in: "data:T axes:I?", out: "reduced:T", types: "T=$red I=i64",
		attrs: "axes:ints<18 keepdims:int=1 noop_with_empty_axes:int=0>=18",
		doc:   "Product over axes.",
		older: []OlderArity{{Until: 18, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1}}},
	{name: "ReduceSum", versions: "1 11 13", in: "data:T axes:I?", out: "reduced:T", types: "T=$red I=i64",
		attrs: "axes:ints<13 keepdims:int=1 noop_with_empty_axes:int=0>=13",
		doc:   "Sum over axes.",
		older: []OlderArity{{Until: 13, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1}}},
	{name: "ReduceSumSquare", versions: "1 11 13 18", in: "data:T axes:I?", out: "reduced:T", types: "T=$red I=i64",
		attrs: "axes:ints<18 keepdims:int=1 noop_with_empty_axes:int=0>=18",
		doc:   "Sum of squares over axes.",
		older: []OlderArity{{Until: 18, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1}}},
	{"Relu", "1 6 13 14", "X:T", "Y:T", "T=$fb,i8,i16,i32,i64", "consumed_inputs:ints<6", "ew", "max(0, x).", nil},
	{name: "Reshape", versions: "1 5 13 14 19 21 23 24 25", in: "data:T shape:I", out: "reshaped:T", types: "T=$all I=i64",
		attrs: "allowzero:int=0>=14 consumed_inputs:ints<5 shape:ints<5",
		doc:   "Gives a tensor a new shape.",
		older: []OlderArity{{Until: 5, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1}}},
	{name: "Resize", versions: "10 11 13 18 19", in: "X:T1 roi:T2? scales:F? sizes:I?", out: "Y:T1", types: "T1=$all T2=$fb F=f32 I=i64",
		attrs: "antialias:int=0>=18 axes:ints>=18 coordinate_transformation_mode:string=half_pixel>=11 cubic_coeff_a:float=-0.75>=11 exclude_outside:int=0>=11 extrapolation_value:float=0>=11 keep_aspect_ratio_policy:string=stretch>=18 mode:string=nearest nearest_mode:string=round_prefer_floor>=11",
		doc:   "Resizes by interpolation.",
		older: []OlderArity{{Until: 11, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1}}},
	{name: "ReverseSequence", versions: "10", in: "input:T sequence_lens:I", out: "Y:T", types: "T=$all I=i64",
		attrs: "batch_axis:int=1 time_axis:int=0",
		doc:   "Reverses variable-length sequences in a batch."},
	{name: "RoiAlign", versions: "10 16 22", in: "X:T1 rois:T1 batch_indices:T2", out: "Y:T1", types: "T1=$fb T2=i64",
		attrs: "coordinate_transformation_mode:string=half_pixel>=16 mode:string=avg output_height:int=1 output_width:int=1 sampling_ratio:int=0 spatial_scale:float=1",
		doc:   "Pools regions of interest by bilinear sampling."},
	{name: "RotaryEmbedding", versions: "23", in: "X:T cos_cache:T sin_cache:T position_ids:M?", out: "Y:T", types: "T=f32,f16,bf16 M=i64",
		attrs: "interleaved:int=0 num_heads:int=0 rotary_embedding_dim:int=0",
		doc:   "Rotary position embedding."},
	{"Round", "11 22", "X:T", "Y:T", "T=$fb", "", "ew", "Rounds half to even.", nil},
	{name: "STFT", versions: "17", in: "signal:T1 frame_step:T2 window:T1? frame_length:T2?", out: "output:T1", types: "T1=$fb T2=i32,i64",
		attrs: "onesided:int=1",
		doc:   "Short-time Fourier transform."},
	{name: "Scan", versions: "8 9 11 16 19 21 23 24 25",
		in: "initial_state_and_scan_inputs:V[]", out: "final_state_and_scan_outputs:V[]", types: "V=$all",
		attrs: "body:graph! directions:ints<9 num_scan_inputs:int! scan_input_axes:ints>=9 scan_input_directions:ints>=9 scan_output_axes:ints>=9 scan_output_directions:ints>=9",
		doc:   "Runs a subgraph over slices of its inputs.",
		older: []OlderArity{{Until: 9, MinIn: 1, MaxIn: -1, MinOut: 1, MaxOut: -1}}},
	{"Scatter", "9 11", "data:T indices:I updates:T", "output:T", "T=$all I=i32,i64", "axis:int=0", "", "Deprecated ScatterElements.", nil},
	{name: "ScatterElements", versions: "11 13 16 18", in: "data:T indices:I updates:T", out: "output:T", types: "T=$all I=i32,i64",
		attrs: "axis:int=0 reduction:string=none>=16",
		doc:   "Writes updates at positions given by an index tensor."},
	{name: "ScatterND", versions: "11 13 16 18", in: "data:T indices:I updates:T", out: "output:T", types: "T=$all I=i64",
		attrs: "reduction:string=none>=16",
		doc:   "Writes updates at N-dimensional indices."},
	{name: "Selu", versions: "1 6 22", in: "X:T", out: "Y:T", types: "T=$fb",
		attrs: "alpha:float=1.6732632 consumed_inputs:ints<6 gamma:float=1.050701", flags: "ew",
		doc: "Scaled exponential linear unit."},
	{name: "SequenceAt", versions: "11", in: "input_sequence:S position:I", out: "tensor:T", types: "S=seq:$all T=$all I=i32,i64",
		doc: "The tensor at a position of a sequence."},
	{"SequenceConstruct", "11", "inputs:T...", "output_sequence:S", "T=$all S=seq:$all", "", "", "A sequence of the inputs.", nil},
	{"SequenceEmpty", "11", "", "output:S", "S=seq:$all", "dtype:int", "", "An empty sequence.", nil},
	{name: "SequenceErase", versions: "11", in: "input_sequence:S position:I?", out: "output_sequence:S", types: "S=seq:$all I=i32,i64",
		doc: "A sequence without the tensor at a position."},
	{name: "SequenceInsert", versions: "11",
		in: "input_sequence:S tensor:T position:I?", out: "output_sequence:S", types: "S=seq:$all T=$all I=i32,i64",
		doc: "A sequence with a tensor inserted."},
	{"SequenceLength", "11", "input_sequence:S", "length:I", "S=seq:$all I=i64", "", "", "Number of tensors in a sequence.", nil},
	{name: "SequenceMap", versions: "17", in: "input_sequence:S additional_inputs:V?[]", out: "out_sequence:S[]", types: "S=seq:$all V=t,seq:$all",
		attrs: "body:graph!",
		doc:   "Applies a subgraph to each element of sequences."},
	{name: "Shape", versions: "1 13 15 19 21 23 24 25", in: "data:T", out: "shape:I", types: "T=$all I=i64",
		attrs: "end:int>=15 start:int=0>=15",
		doc:   "The shape of a tensor (or a slice of it)."},
	{"Shrink", "9", "input:T", "output:T", "T=$n", "bias:float=0 lambd:float=0.5", "ew", "Shrinks values near zero.", nil},
	{"Sigmoid", "1 6 13", "X:T", "Y:T", "T=$fb", "consumed_inputs:ints<6", "ew", "1/(1+exp(-x)).", nil},
	{"Sign", "9 13", "input:T", "output:T", "T=$nb", "", "ew", "Sign of each element.", nil},
	{"Sin", "7 22", "input:T", "output:T", "T=$fb", "", "ew", "Sine.", nil},
	{"Sinh", "9 22", "input:T", "output:T", "T=$fb", "", "ew", "Hyperbolic sine.", nil},
	{"Size", "1 13 19 21 23 24 25", "data:T", "size:I", "T=$all I=i64", "", "", "Number of elements of a tensor.", nil},
	{name: "Slice", versions: "1 10 11 13", in: "data:T starts:I ends:I axes:I? steps:I?", out: "output:T", types: "T=$all I=i32,i64",
		attrs: "axes:ints<10 ends:ints!<10 starts:ints!<10",
		doc:   "Extracts a strided slice.",
		older: []OlderArity{{Until: 10, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1}}},
	{"Softmax", "1 11 13", "input:T", "output:T", "T=$fb", "axis:int=1<13 axis:int=-1>=13", "", "Softmax along an axis.", nil},
	{name: "SoftmaxCrossEntropyLoss", versions: "12 13",
		in: "scores:T labels:Tind weights:T?", out: "output:T log_prob:T?", types: "T=$fb Tind=i32,i64",
		attrs: "ignore_index:int reduction:string=mean",
		doc:   "Softmax cross-entropy loss."},
	{"Softplus", "1 22", "X:T", "Y:T", "T=$fb", "", "ew", "log(exp(x) + 1).", nil},
	{"Softsign", "1 22", "input:T", "output:T", "T=$fb", "", "ew", "x/(1+|x|).", nil},
	{"SpaceToDepth", "1 13", "input:T", "output:T", "T=$all", "blocksize:int!", "", "Moves spatial blocks into depth.", nil},
	{name: "Split", versions: "1 2 11 13 18", in: "input:T split:I?", out: "outputs:T...", types: "T=$all I=i64",
		attrs: "axis:int=0 num_outputs:int>=18 split:ints<13",
		doc:   "Splits a tensor into parts along an axis."},
	{name: "SplitToSequence", versions: "11 24", in: "input:T split:I?", out: "output_sequence:S", types: "T=$all I=i32,i64 S=seq:$all",
		attrs: "axis:int=0 keepdims:int=1",
		doc:   "Splits a tensor into a sequence."},
	{"Sqrt", "1 6 13", "X:T", "Y:T", "T=$fb", "consumed_inputs:ints<6", "ew", "Square root.", nil},
	{"Squeeze", "1 11 13 21 23 24 25", "data:T axes:I?", "squeezed:T", "T=$all I=i64", "axes:ints<13", "", "Removes dims of size one.",
		[]OlderArity{{Until: 13, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1}}},
	{name: "StringNormalizer", versions: "10", in: "X:T", out: "Y:T", types: "T=string",
		attrs: "case_change_action:string=NONE is_case_sensitive:int=0 locale:string stopwords:strings",
		doc:   "Normalizes case and removes stop words."},
	{name: "Sub", versions: "1 6 7 13 14", in: "A:T B:T", out: "C:T", types: "T=$nb",
		attrs: "axis:int<7 broadcast:int=0<7 consumed_inputs:ints<6", flags: "ew",
		doc: "Difference with multidirectional broadcasting."},
	{"Sum", "1 6 8 13", "data_0:T...", "sum:T", "T=$fb", "consumed_inputs:ints<6", "ew comm", "Elementwise sum of the inputs.", nil},
	{"Swish", "24", "X:T", "Y:T", "T=$fb", "alpha:float=1", "ew", "x * sigmoid(alpha * x).", nil},
	{"Tan", "7 22", "input:T", "output:T", "T=$fb", "", "ew", "Tangent.", nil},
	{"Tanh", "1 6 13", "input:T", "output:T", "T=$fb", "consumed_inputs:ints<6", "ew", "Hyperbolic tangent.", nil},
	{name: "TensorScatter", versions: "24", in: "past_cache:T update:T write_indices:I?", out: "present_cache:T", types: "T=$all I=i64",
		attrs: "axis:int=-2 mode:string=linear",
		doc:   "Writes an update into a cache along the sequence axis at per-batch offsets."},
	{name: "TfIdfVectorizer", versions: "9", in: "X:T", out: "Y:T1", types: "T=string,i32,i64 T1=f32",
		attrs: "max_gram_length:int! max_skip_count:int! min_gram_length:int! mode:string! ngram_counts:ints! ngram_indexes:ints! pool_int64s:ints pool_strings:strings weights:floats",
		doc:   "N-gram TF-IDF features."},
	{"ThresholdedRelu", "10 22", "X:T", "Y:T", "T=$fb", "alpha:float=1", "ew", "x if x > alpha else 0.", nil},
	{"Tile", "1 6 13", "input:T repeats:I", "output:T", "T=$all I=i64", "", "", "Repeats a tensor along each axis.",
		[]OlderArity{{Until: 6, MinIn: 3, MaxIn: 3, MinOut: 1, MaxOut: 1}}},
	{name: "TopK", versions: "1 10 11 24", in: "X:T K:I", out: "Values:T Indices:I", types: "T=$nb I=i64",
		attrs: "axis:int=-1 k:int!<10 largest:int=1>=11 sorted:int=1>=11",
		doc:   "The k largest (or smallest) elements along an axis.",
		older: []OlderArity{{Until: 10, MinIn: 1, MaxIn: 1, MinOut: 2, MaxOut: 2}}},
	{"Transpose", "1 13 21 23 24 25", "data:T", "transposed:T", "T=$all", "perm:ints", "", "Permutes the axes.", nil},
	{"Trilu", "14", "input:T k:I?", "output:T", "T=$all I=i64", "upper:int=1", "", "Upper or lower triangular part of matrices.", nil},
	{name: "Unique", versions: "11", in: "X:T", out: "Y:T indices:I? inverse_indices:I? counts:I?", types: "T=$all I=i64",
		attrs: "axis:int sorted:int=1",
		doc:   "Unique elements or slices."},
	{"Unsqueeze", "1 11 13 21 23 24 25", "data:T axes:I", "expanded:T", "T=$all I=i64", "axes:ints!<13", "", "Inserts dims of size one.",
		[]OlderArity{{Until: 13, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1}}},
	{name: "Upsample", versions: "1 7 9 10", in: "X:T scales:F", out: "Y:T", types: "T=$all F=f32",
		attrs: "height_scale:float<7 mode:string=nearest scales:floats<9 width_scale:float<7",
		doc:   "Deprecated Resize.",
		older: []OlderArity{{Until: 9, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1}}},
	{"Where", "9 16", "condition:B X:T Y:T", "output:T", "B=bool T=$all", "", "ew", "Picks from X where condition holds, else from Y.", nil},
	{"Xor", "1 7", "A:T B:T", "C:T1", "T=bool T1=bool", "axis:int<7 broadcast:int=0<7", "ew comm", "Logical exclusive or.", nil},
}

// dtypeSets are the $names the type column may use.
var dtypeSets = map[string][]DType{
	"f":   {F16, F32, F64},
	"fb":  {BF16, F16, F32, F64},
	"i":   {I8, I16, I32, I64, U8, U16, U32, U64},
	"n":   {I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64},
	"nb":  {I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, BF16},
	"red": {U32, U64, I32, I64, BF16, F16, F32, F64},
	"all": {I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, BF16, Bool, String, C64, C128,
		F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, U4, I4, F4E2M1, F8E8M0, U2, I2},
	// bc: BitCast's fixed-width types (no strings, no sub-byte kinds)
	"bc": {I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, BF16, Bool, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0},
	// q: what QuantizeLinear makes and DequantizeLinear reads (opsets 10-25)
	"q": {I8, U8, I16, U16, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, U4, I4, F4E2M1, U2, I2},
}

// opDef is one row of opDefs: name, since_versions, inputs, outputs, type
// constraints, attributes, flags ("ew", "comm"), doc, older arities.
type opDef struct {
	name, versions, in, out, types, attrs, flags, doc string
	older                                             []OlderArity
}

func init() {
	for _, d := range opDefs {
		s, err := parseOpDef(d)
		if err != nil {
			panic(err)
		}
		register(s)
	}
	declarePackedAttrs() // ops_cuvil.go: the prepack pass's attributes on Conv, Gemm, MatMul
}

func parseOpDef(d opDef) (*OpSchema, error) {
	s := &OpSchema{Name: d.name, Doc: d.doc, Older: d.older, Types: map[string][]DType{}}
	bad := func(format string, args ...any) (*OpSchema, error) {
		return nil, fmt.Errorf("op table: %s: "+format, append([]any{d.name}, args...)...)
	}
	for _, f := range strings.Fields(d.versions) {
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 || v > MaxOpset || (len(s.Versions) > 0 && v <= s.Versions[len(s.Versions)-1]) {
			return bad("bad version list %q", d.versions)
		}
		s.Versions = append(s.Versions, v)
	}
	if len(s.Versions) == 0 {
		return bad("no versions")
	}
	for _, f := range strings.Fields(d.types) {
		letter, spec, ok := strings.Cut(f, "=")
		if !ok {
			return bad("bad type constraint %q", f)
		}
		if kinds, dts, ok := strings.Cut(spec, ":"); ok {
			spec = dts
			for _, k := range strings.Split(kinds, ",") {
				kind, ok := map[string]TypeKind{"t": TensorKind, "seq": SequenceKind, "opt": OptionalKind, "map": MapKind}[k]
				if !ok {
					return bad("bad kind %q in %q", k, f)
				}
				if s.Kinds == nil {
					s.Kinds = map[string][]TypeKind{}
				}
				s.Kinds[letter] = append(s.Kinds[letter], kind)
			}
		}
		for _, name := range strings.Split(spec, ",") {
			if set, ok := dtypeSets[strings.TrimPrefix(name, "$")]; ok && strings.HasPrefix(name, "$") {
				s.Types[letter] = append(s.Types[letter], set...)
				continue
			}
			dt, ok := ParseDType(name)
			if !ok || dt == Undefined {
				return bad("bad dtype %q in %q", name, f)
			}
			s.Types[letter] = append(s.Types[letter], dt)
		}
	}
	var err error
	if s.Inputs, err = parseArgs(d.in, s.Types); err != nil {
		return bad("inputs: %v", err)
	}
	if s.Outputs, err = parseArgs(d.out, s.Types); err != nil {
		return bad("outputs: %v", err)
	}
	for _, f := range strings.Fields(d.attrs) {
		a, err := parseAttrSpec(f)
		if err != nil {
			return bad("%v", err)
		}
		s.Attrs = append(s.Attrs, a)
	}
	for _, f := range strings.Fields(d.flags) {
		switch f {
		case "ew":
			s.Elementwise = true
		case "comm":
			s.Commutative = true
		default:
			return bad("bad flag %q", f)
		}
	}
	return s, nil
}

func parseArgs(text string, types map[string][]DType) ([]ArgSpec, error) {
	var out []ArgSpec
	fields := strings.Fields(text)
	for i, f := range fields {
		name, t, ok := strings.Cut(f, ":")
		if !ok {
			return nil, fmt.Errorf("bad formal %q", f)
		}
		a := ArgSpec{Name: name}
		if s, ok := strings.CutSuffix(t, "[]"); ok {
			t, a.Variadic, a.Heterogeneous = s, true, true
		} else if s, ok := strings.CutSuffix(t, "..."); ok {
			t, a.Variadic = s, true
		}
		if s, ok := strings.CutSuffix(t, "?"); ok {
			t, a.Optional = s, true
		}
		if _, ok := types[t]; !ok {
			return nil, fmt.Errorf("formal %q uses undeclared constraint %q", name, t)
		}
		if a.Variadic && i != len(fields)-1 {
			return nil, fmt.Errorf("variadic formal %q is not last", name)
		}
		a.Type = t
		out = append(out, a)
	}
	return out, nil
}

// ParseAttrKind is the inverse of AttrKind.String.
func ParseAttrKind(s string) (AttrKind, bool) {
	for k, n := range attrKindNames {
		if n == s {
			return AttrKind(k), true
		}
	}
	return AttrUndefined, false
}

// parseAttrSpec reads name:kind[=default][!][<N][>=N].
func parseAttrSpec(f string) (AttrSpec, error) {
	var a AttrSpec
	rest := f
	for {
		i := strings.LastIndexAny(rest, "<>")
		if i < 0 {
			break
		}
		num := rest[i+1:]
		if rest[i] == '>' {
			num = strings.TrimPrefix(num, "=")
		}
		n, err := strconv.Atoi(num)
		if err != nil {
			return a, fmt.Errorf("bad attribute %q", f)
		}
		if rest[i] == '<' {
			a.Until = n
		} else {
			a.Since = n
		}
		rest = rest[:i]
	}
	if s, ok := strings.CutSuffix(rest, "!"); ok {
		a.Required, rest = true, s
	}
	name, rest, ok := strings.Cut(rest, ":")
	if !ok {
		return a, fmt.Errorf("bad attribute %q", f)
	}
	kind, def, hasDef := strings.Cut(rest, "=")
	a.Name = name
	if a.Kind, ok = ParseAttrKind(kind); !ok || a.Kind == AttrUndefined {
		return a, fmt.Errorf("attribute %q: bad kind %q", f, kind)
	}
	if !hasDef {
		return a, nil
	}
	var err error
	switch a.Kind {
	case AttrInt:
		a.Default, err = strconv.ParseInt(def, 10, 64)
	case AttrFloat:
		var x float64
		x, err = strconv.ParseFloat(def, 32)
		a.Default = float32(x)
	case AttrString:
		a.Default = def
	case AttrInts:
		var v []int64
		for _, p := range strings.Split(def, ",") {
			n, e := strconv.ParseInt(p, 10, 64)
			if e != nil {
				err = e
			}
			v = append(v, n)
		}
		a.Default = v
	case AttrStrings:
		a.Default = strings.Split(def, ",")
	default:
		err = fmt.Errorf("no default for kind %s", a.Kind)
	}
	if err != nil {
		return a, fmt.Errorf("attribute %q: %v", f, err)
	}
	return a, nil
}
