package templates

func init() {
	for op, k := range map[string]Kernel{
		"Add": Add, "Sub": Sub, "Mul": Mul, "Div": Div, "Pow": Pow, "Mod": Mod,
		"BitShift": BitShift, "PRelu": PRelu,
		"Equal": Equal, "Less": Less, "Greater": Greater, "LessOrEqual": LessOrEqual,
		"GreaterOrEqual": GreaterOrEqual, "And": And, "Or": Or, "Xor": Xor, "Not": Not,
		"Sum": Sum, "Mean": Mean, "Max": Max, "Min": Min,
		"Sqrt": Sqrt, "Exp": Exp, "Log": Log, "Neg": Neg, "Abs": Abs,
		"Reciprocal": Reciprocal, "Floor": Floor, "Ceil": Ceil, "Round": Round, "Sign": Sign,
		"Relu": Relu, "LeakyRelu": LeakyRelu, "Elu": Elu, "Selu": Selu, "Celu": Celu,
		"ThresholdedRelu": ThresholdedRelu, "Sigmoid": Sigmoid, "HardSigmoid": HardSigmoid,
		"HardSwish": HardSwish, "Softplus": Softplus, "Softsign": Softsign, "Mish": Mish,
		"Tanh": Tanh, "Erf": Erf, "Sin": Sin, "Cos": Cos, "Tan": Tan, "Asin": Asin,
		"Acos": Acos, "Atan": Atan, "Sinh": Sinh, "Cosh": Cosh, "Asinh": Asinh,
		"Acosh": Acosh, "Atanh": Atanh, "IsNaN": IsNaN, "IsInf": IsInf,
		"Clip": Clip, "Where": Where, "Identity": Identity, "Dropout": Dropout,
	} {
		register(op, k)
	}
}

func init() {
	register("Cast", Cast)
	register("BitCast", BitCast)
	register("CastLike", CastLike)
}

func init() {
	register("BitwiseAnd", BitwiseAnd)
	register("BitwiseOr", BitwiseOr)
	register("BitwiseXor", BitwiseXor)
	register("BitwiseNot", BitwiseNot)
	register("Swish", Swish)
	register("Gelu", Gelu)
}

func init() {
	register("RandomUniform", RandomUniform)
	register("RandomUniformLike", RandomUniformLike)
	register("RandomNormal", RandomNormal)
	register("RandomNormalLike", RandomNormalLike)
	register("Bernoulli", Bernoulli)
	register("Multinomial", Multinomial)
}
