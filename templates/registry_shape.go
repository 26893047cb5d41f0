package templates

func init() {
	for op, k := range map[string]Kernel{
		"Reshape": Reshape, "Flatten": Flatten, "Squeeze": Squeeze, "Unsqueeze": Unsqueeze,
		"Transpose": Transpose, "Concat": Concat, "Split": Split, "Slice": Slice,
		"Expand": Expand, "Tile": Tile, "Pad": Pad, "DepthToSpace": DepthToSpace,
		"SpaceToDepth": SpaceToDepth, "Gather": Gather, "GatherElements": GatherElements,
		"GatherND": GatherND, "ScatterElements": ScatterElements, "Scatter": Scatter,
		"ScatterND": ScatterND, "OneHot": OneHot, "Trilu": Trilu, "CumSum": CumSum, "CumProd": CumProd,
		"Col2Im": Col2Im, "CenterCropPad": CenterCropPad,
		"Range": Range, "EyeLike": EyeLike, "NonZero": NonZero, "Constant": Constant,
		"ConstantOfShape": ConstantOfShape, "Shape": Shape, "Size": Size,
	} {
		register(op, k)
	}
}
