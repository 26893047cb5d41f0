package passes

// Pipeline is the ordered list of passes Run executes. Read it top to
// bottom; each entry says why it sits where it does.
var Pipeline = []*Pass{
	// Before everything: Gradient has no kernel, its backward nodes are
	// ordinary ops every later pass must see, and it names y only by name,
	// so constfold and DCE would fold or drop the forward nodes it needs.
	Gradient,
	// Before shapes: FlexAttention's score/mask/prob subgraphs become
	// ordinary nodes of the graph (its kernel runs none), which inference
	// and every later pass then see like any other.
	InlineFlexAttention,
	// Then (gradient only adds nodes): every later pass and gen read
	// Value.Type, and the importer only knows the declared (untrusted)
	// types.
	Shapes,
	// After shapes: folding Shape/Size and shape-arithmetic chains needs
	// shapes; it re-runs inference itself until nothing more folds.
	ConstFold,
	// After folding: folded nodes leave their producers (Shape, Gather,
	// Constant...) and unused initializers dead.
	DCE,
	// After constfold (an fp16 model's ConstantOfShape weights are f16
	// constants by now) and before every pattern: an fp16 model's compute
	// becomes f32, so the folds, fusions and kernels see the f32 model they
	// are written for, its weights marked to stay f16 in weights.bin.
	WidenHalf,
	// Canonicalisation, before any pattern matching, so patterns see one
	// spelling: no Identity/Dropout between a Conv and its BN or Relu...
	RemoveIdentity,
	// ...binary Add/Max/Min where old-style exports write variadic
	// Sum/Max/Min/Mean (a residual Sum is an Add the conv epilogue takes)...
	CanonOps,
	// ...no Pad in front of a Conv or pool that can pad by itself...
	FoldPad,
	// ...one node per distinct computation (after constfold, which made
	// the duplicated shape chains identical constants)...
	CSE,
	// ...one Reshape where exporters chain Squeeze/Unsqueeze/Flatten...
	FoldReshape,
	// ...and no Transpose pairs that cancel or compose.
	FoldTranspose,
	// ...and ShuffleNet's Reshape/Transpose/Reshape channel shuffle as one
	// cuvil::ChannelShuffle: after fold-reshape and fold-transpose (one
	// Reshape each side, no stray Transpose pair) and before layout, which
	// runs it channels-last inside a convolution chain.
	FuseChannelShuffle,
	// ...one node per activation exporters write out (x*Sigmoid(x),
	// x*Clip(x+3,0,6)/6, x*Tanh(Softplus(x))): after CSE (the two reads of
	// x are one value), before fold-affine (it would fold HardSigmoid's
	// "+ 3" into the conv before it) and before fuse-conv and fuse-gemm,
	// which take one activation node into their epilogue.
	FuseActivation,
	// BN folds into the producer's weights; what cannot becomes Mul+Add,
	// which the next pass folds further.
	FoldBatchNorm,
	// After fold-batchnorm: merges its leftover Mul+Add with the model's
	// own scale-shift constants and folds them into Conv/Gemm weights,
	// before fusion hides the Conv inside a FusedConv.
	FoldAffine,
	// Before fuse-gemm: GELU must be one node to become a MatMul epilogue.
	FuseGelu,
	// Before fuse-gemm: the residual Add in front of a LayerNorm goes into
	// SkipLayerNorm (one row pass), not into the MatMul before it.
	FuseLayerNorm,
	// After fold-affine (scales are final) and before the MatMul
	// epilogues: attention's MatMul/scale/mask/Softmax/MatMul becomes one
	// row pass that never writes the [Sq, Sk] scores.
	FuseAttention,
	// After constfold (weights and shapes final) and before fuse-conv (it
	// matches plain Conv): taps that read only padding (dilated convs on
	// small maps) leave the kernel, so layout and prepack see the smaller conv.
	TrimConvTaps,
	// After fold-batchnorm/fold-affine (a BN after a ConvTranspose folds
	// into its weights first) and before fuse-conv (the 1x1 Conv it writes
	// takes the bias, activation and residual like any other): a
	// ConvTranspose with kernel == stride becomes a 1x1 Conv and a pixel
	// shuffle.
	ConvTransposeAsConv,
	// After the folds: a Conv's bias is final, so the epilogue takes the
	// activation and residual Add left after it.
	FuseConv,
	// Same, for Gemm and weight MatMuls (bias Add, GELU, residual).
	FuseGemm,
	// After shapes and constfold (it reads the scales' and zero points'
	// shapes, which folding makes known), anywhere before layout, which
	// leaves the integer ops it makes NCHW: QLinearMatMul and QLinearConv
	// become the integer GEMM/conv with the requantisation in the epilogue.
	FuseQuant,
	// With Options.Quant only (-quantize int8): after the conv and GEMM
	// fusions (it takes FusedConv/FusedGemm/FusedMatMul whole, Relu/Clip
	// in the integer epilogue) and before layout and prepack: float convs
	// and GEMMs with constant weights become QuantizeLinear -> QConv/QGemm.
	Quantize,
	// Last fusion: per-channel Mul+Add that nothing absorbed (pre-activation
	// BN) with its activation.
	FuseScaleShift,
	// After the fusions that match float ops (a LayerNorm or an attention
	// is kept in f32 as one node, not as its ReduceMeans and Softmax) and
	// before layout and prepack (prepack stores the weights half that
	// -precision asks for): half inputs of sensitive ops get explicit casts.
	Precision,
	// After every fusion (it moves whole fused nodes; the patterns above
	// match NCHW ops): chains of convolutions go channels-last where the
	// cost model says so, with Transposes only at their edges.
	Layout,
	// After layout (it matches the NHWC convolutions layout made): an
	// inverted bottleneck's expand, depthwise and project convolutions run
	// as one pass over row bands, the expanded tensors never in memory.
	FuseConvChain,
	// After layout: only then are the channels the last axis and the
	// convolutions NHWC FusedConvs that can write a slice of a wider row;
	// those feeding a channel Concat write into its output.
	ConcatInto,
	// After layout (it matches the NHWC pointwise FusedConvs layout made),
	// fuse-conv-chain and concat-into (neither knows a conv's Scale input):
	// a squeeze-excitation gate's channel Mul goes into the conv reading it.
	FuseSEGate,
	// After every other fusion (an epilogue inside a GEMM or conv beats a
	// loop of its own) and after layout (it groups ops in their final
	// layout): what element-wise ops are left run as one loop.
	FuseElementwise,
	// Any time after shapes (inference reads the trees' attributes): tree
	// ensembles become the flat arrays their kernels read from weights.
	CompileTrees,
	// After every fusion and layout (a weight's packed form depends on the
	// node that reads it: its op, layout, window and input map): constant
	// weights go into their kernels' layouts, and the Winograd rules pick
	// the 3x3 convolutions that run Winograd (the last decision before gen,
	// which only writes the bytes).
	Prepack,
	// Folding replaced weights and fusion dropped nodes: clean up.
	Cleanup,
}

// passOrder is the pipeline's ordering constraints as data (the Go
// compiler's passOrder): each pair's first pass must run before its
// second, for the reason given. TestPassOrder checks Pipeline against it,
// so moving a pass cannot silently break a pass that depends on it.
var passOrder = []struct {
	before, after *Pass
	why           string
}{
	{Gradient, Shapes, "the backward nodes gradient adds need types like any other"},
	{Gradient, ConstFold, "constfold would fold forward nodes Gradient names only by name"},
	{Gradient, DCE, "DCE would drop forward nodes Gradient names only by name"},
	{Shapes, ConstFold, "folding Shape/Size needs shapes"},
	{InlineFlexAttention, Shapes, "the inlined score, mask and prob subgraphs are ordinary nodes that need types"},
	{Shapes, CompileTrees, "shape inference reads the trees' attributes, which compile-trees replaces by packed arrays"},
	{ConstFold, DCE, "folded nodes leave dead producers"},
	{ConstFold, CSE, "folding makes duplicated shape chains identical constants"},
	{Shapes, CanonOps, "a Sum becomes a chain only when its inputs' shapes are known equal"},
	{CanonOps, FuseConv, "the residual epilogue matches Add, not Sum"},
	{ConstFold, FoldPad, "a Pad's pads and value must be constants"},
	{FoldPad, TrimConvTaps, "a folded Pad's zeros are Conv padding whose taps trim-conv-taps can drop"},
	{FoldPad, FuseConv, "FuseConv takes the Conv with the Pad folded in"},
	{FoldPad, Layout, "layout moves whole Conv/pool nodes, not a Pad in front of them"},
	{CanonOps, FuseElementwise, "element-wise groups take Add/Max/Min, not variadic Sum/Mean"},
	{CanonOps, CSE, "the chains' Adds merge like any other"},
	{RemoveIdentity, FoldBatchNorm, "patterns must not see Identity/Dropout between a Conv and its BN"},
	{RemoveIdentity, FuseConv, "patterns must not see Identity/Dropout between a Conv and its Relu"},
	{FoldReshape, FuseChannelShuffle, "the shuffle matches one Reshape on each side of its Transpose, not a chain"},
	{FuseChannelShuffle, Layout, "layout runs the shuffle NHWC as one node; the 5-D Transpose would cut the chain"},
	{FoldReshape, FuseAttention, "attention's heads form matches one Reshape, not a chain"},
	{FoldBatchNorm, FoldAffine, "fold-affine folds the Mul+Add BN leaves"},
	{CSE, FuseActivation, "x*Sigmoid(x) and its kin match when both reads of x are one value"},
	{RemoveIdentity, FuseActivation, "patterns must not see Identity between an activation's ops"},
	{FuseActivation, FoldAffine, "fold-affine would fold HardSigmoid's + 3 and / 6 into the producer, hiding x"},
	{FuseActivation, FuseConv, "a decomposed activation must be one node to become a conv epilogue"},
	{FuseActivation, FuseGemm, "a decomposed activation must be one node to become a GEMM epilogue"},
	{FuseActivation, FuseScaleShift, "a decomposed activation must be one node to join a ScaleShift"},
	{FoldAffine, FuseConv, "a Conv's weights and bias must be final before it hides in a FusedConv"},
	{ConstFold, TrimConvTaps, "weights made by constant chains and the maps' sizes are known only once folded"},
	{TrimConvTaps, FuseConv, "trim-conv-taps matches plain Conv"},
	{FoldBatchNorm, ConvTransposeAsConv, "a BN after a ConvTranspose folds into its weights, which the rewrite then re-lays"},
	{ConvTransposeAsConv, FuseConv, "the 1x1 Conv it writes is a plain Conv for fuse-conv"},
	{FoldAffine, FuseAttention, "scales are final"},
	{FuseGelu, FuseGemm, "GELU must be one node to become a MatMul epilogue"},
	{FuseLayerNorm, FuseGemm, "the residual Add before a LayerNorm goes into SkipLayerNorm, not the MatMul"},
	{FuseAttention, FuseGemm, "attention's MatMuls must not become FusedMatMuls first"},
	{FuseConv, FuseScaleShift, "a Mul+Add a conv epilogue can take is not a ScaleShift"},
	{FuseConv, Layout, "layout moves whole FusedConvs; the fusion patterns match NCHW ops"},
	{FuseGemm, Layout, "layout moves fused nodes; the fusion patterns match NCHW ops"},
	{FuseScaleShift, Layout, "layout moves ScaleShifts into NHWC chains"},
	{Layout, FuseConvChain, "the chain matches the NHWC FusedConvs layout makes"},
	{Layout, ConcatInto, "only NHWC convs write a slice of a wider row"},
	{Layout, FuseElementwise, "element-wise groups form in their final layout"},
	{Layout, FuseSEGate, "the gate's reader must be an NHWC pointwise FusedConv"},
	{FuseConvChain, FuseSEGate, "a chain's project stage takes no Scale input"},
	{ConcatInto, FuseSEGate, "concat-into appends Into as input 4, which Scale (input 5) must follow"},
	{FuseSEGate, FuseElementwise, "the gate Mul goes into the conv, not an element-wise loop"},
	{FuseConv, FuseElementwise, "an epilogue inside the conv beats a loop of its own"},
	{FuseGemm, FuseElementwise, "an epilogue inside the GEMM beats a loop of its own"},
	{FuseConvChain, FuseElementwise, "a chain's stages keep their epilogues"},
	{FuseElementwise, Cleanup, "fusion drops nodes and leaves constants dead"},
	{FuseConv, Quantize, "quantize takes FusedConvs whole, with their Relu/Clip"},
	{FuseGemm, Quantize, "quantize takes FusedGemm/FusedMatMul whole, with their bias and Relu/Clip"},
	{Quantize, Layout, "layout makes QConv chains NHWC, with the float convs around them"},
	{Quantize, Prepack, "quantize reads float weights unpacked"},
	{Shapes, FuseQuant, "the rewrite reads the scales' and zero points' types and shapes"},
	{ConstFold, FuseQuant, "scales and zero points made by constant chains have shapes only once folded"},
	{ConstFold, Prepack, "weights made by constant chains are packable only once folded"},
	{FoldAffine, Prepack, "folding scales into weights needs them unpacked"},
	{FuseConv, Prepack, "fuse-conv matches Convs with unpacked weights; a FusedConv packs as its layout says"},
	{FuseGemm, Prepack, "fuse-gemm matches Gemm/MatMul with unpacked B"},
	{Layout, Prepack, "NHWC convolutions pack their weights differently"},
	{FuseConvChain, Prepack, "the chain matches unpacked NHWC FusedConvs and packs its stages' weights"},
	{ConcatInto, Prepack, "concat-into matches unpacked NHWC FusedConvs"},
	{FuseLayerNorm, Precision, "a LayerNorm is kept f32 as one node, not as its ReduceMeans"},
	{FuseAttention, Precision, "an attention is kept f32 as one node, not as its Softmax"},
	{FuseGemm, Precision, "fuse-gemm matches MatMul+Add chains the casts would cut"},
	{Precision, Layout, "layout moves the casts with the nodes around them"},
	{Precision, Prepack, "prepack stores the weights -precision makes half"},
	{ConstFold, WidenHalf, "an fp16 model's weights made by ConstantOfShape are f16 constants only once folded"},
	{WidenHalf, FoldBatchNorm, "the folds match f32 weights and carry widen-half's store=f16 mark"},
	{WidenHalf, FuseConv, "the fusions match f32 convs and GEMMs"},
	{WidenHalf, FuseGemm, "the fusions match f32 convs and GEMMs"},
	{WidenHalf, Precision, "the precision pass sees the f32 compute widen-half leaves"},
	{WidenHalf, Prepack, "prepack packs f32 weights and keeps their store=f16 mark"},
}
