package templates

// The ai.onnx.ml operators (k_ml_*.go).

func init() {
	register("ai.onnx.ml::ArrayFeatureExtractor", MLArrayFeatureExtractor)
	register("ai.onnx.ml::Binarizer", MLBinarizer)
	register("ai.onnx.ml::CategoryMapper", MLCategoryMapper)
	register("ai.onnx.ml::FeatureVectorizer", MLFeatureVectorizer)
	register("ai.onnx.ml::Imputer", MLImputer)
	register("ai.onnx.ml::LabelEncoder", MLLabelEncoder)
	register("ai.onnx.ml::Normalizer", MLNormalizer)
	register("ai.onnx.ml::OneHotEncoder", MLOneHotEncoder)
	register("ai.onnx.ml::Scaler", MLScaler)
}

func init() {
	register("ai.onnx.ml::TreeEnsemble", MLTreeEnsemble)
	register("ai.onnx.ml::TreeEnsembleClassifier", MLTreeEnsembleClassifier)
	register("ai.onnx.ml::TreeEnsembleRegressor", MLTreeEnsembleRegressor)
}

func init() {
	register("ai.onnx.ml::LinearClassifier", MLLinearClassifier)
	register("ai.onnx.ml::LinearRegressor", MLLinearRegressor)
	register("ai.onnx.ml::SVMClassifier", MLSVMClassifier)
	register("ai.onnx.ml::SVMRegressor", MLSVMRegressor)
}

func init() {
	register("ai.onnx.ml::CastMap", MLCastMap)
	register("ai.onnx.ml::DictVectorizer", MLDictVectorizer)
	register("ai.onnx.ml::ZipMap", MLZipMap)
}
