package ir

// Operators of the ai.onnx.ml domain (traditional machine learning, the
// domain skl2onnx and onnxmltools emit), opsets 1 to 5, as docs/Operators-ml.md
// of ONNX 1.22 defines them. Rows use the little languages of ops_table.go.
// The ops on map values (CastMap, DictVectorizer, ZipMap) constrain the
// maps' value dtypes here; their shape rules check the key dtypes.

// MLDomain is the domain of ONNX's traditional machine-learning operators.
const MLDomain = "ai.onnx.ml"

// MLUnsupported names the ai.onnx.ml ops the table leaves out, with why,
// for the importer's error (none at present).
var MLUnsupported = map[string]string{}

// MaxMLOpset is the newest ai.onnx.ml opset Cuvil supports.
const MaxMLOpset = 5

// mlPackedAttrs are Cuvil's own attributes of the tree ensemble ops: the
// compile-trees pass replaces the trees' attributes by these packed arrays
// (templates.MLPackForest's layout), which gen stores in weights.bin.
const mlPackedAttrs = " packed_leaves:tensor packed_members:tensor packed_nodes:tensor packed_roots:tensor packed_splits:tensor packed_targets:tensor packed_weights:tensor"

// The tree ensemble attribute lists shared by the classifier and regressor.
const mlTreeNodeAttrs = "nodes_falsenodeids:ints nodes_featureids:ints nodes_hitrates:floats nodes_hitrates_as_tensor:tensor>=3 " +
	"nodes_missing_value_tracks_true:ints nodes_modes:strings nodes_nodeids:ints nodes_treeids:ints nodes_truenodeids:ints " +
	"nodes_values:floats nodes_values_as_tensor:tensor>=3 post_transform:string=NONE base_values:floats base_values_as_tensor:tensor>=3"

var mlOpDefs = []opDef{
	{"ArrayFeatureExtractor", "1", "X:T Y:I", "Z:T", "T=f32,f64,i64,i32,string I=i64", "", "",
		"Selects elements of the last axis of X at the indices Y.", nil},
	{"Binarizer", "1", "X:T", "Y:T", "T=f32,f64,i64,i32", "threshold:float=0", "ew",
		"1 where X > threshold, else 0.", nil},
	{"CastMap", "1", "X:T1", "Y:T2", "T1=map:string,f32 T2=string,f32,i64",
		"cast_to:string=TO_FLOAT map_form:string=DENSE max_map:int=1", "",
		"Converts a map from int64 to a tensor, dense (keys 0..max_map-1) or sparse (in key order).", nil},
	{"CategoryMapper", "1", "X:T1", "Y:T2", "T1=string,i64 T2=string,i64",
		"cats_int64s:ints cats_strings:strings default_int64:int=-1 default_string:string=_Unused", "ew",
		"Maps strings to integers and integers to strings through two parallel lists.", nil},
	{"DictVectorizer", "1", "X:T1", "Y:T2", "T1=map:string,i64,f32,f64 T2=string,i64,f32,f64",
		"int64_vocabulary:ints string_vocabulary:strings", "",
		"Scatters a map's values into a [1, C] tensor at their keys' positions in a vocabulary.", nil},
	{"FeatureVectorizer", "1", "X:T1...", "Y:T2", "T1=i32,i64,f32,f64 T2=f32", "inputdimensions:ints", "",
		"Concatenates the inputs' feature columns into one [N, C] float tensor.", nil},
	{"Imputer", "1", "X:T", "Y:T", "T=f32,f64,i64,i32",
		"imputed_value_floats:floats imputed_value_int64s:ints replaced_value_float:float=0 replaced_value_int64:int=0", "",
		"Replaces a marker value (or NaN) by per-feature or single imputed values.", nil},
	{name: "LabelEncoder", versions: "1 2 4", in: "X:T1", out: "Y:T2", types: "T1=string,i64,f32,i32,i16,f64 T2=string,i64,f32,i32,i16,f64",
		attrs: "classes_strings:strings<2 default_int64:int=-1 default_string:string=_Unused default_float:float=-0>=2 " + "keys_floats:floats>=2 keys_int64s:ints>=2 keys_strings:strings>=2 values_floats:floats>=2 values_int64s:ints>=2 values_strings:strings>=2 " + "default_tensor:tensor>=4 keys_tensor:tensor>=4 values_tensor:tensor>=4", flags: "ew",
		doc: "Maps each element through a key-value table, with a default for missing keys."},
	{"LinearClassifier", "1", "X:T1", "Y:T2 Z:F", "T1=f32,f64,i64,i32 T2=string,i64 F=f32",
		"classlabels_ints:ints classlabels_strings:strings coefficients:floats! intercepts:floats multi_class:int=0 post_transform:string=NONE", "",
		"Linear classifier: scores X*W^T+b, labels by argmax.", nil},
	{"LinearRegressor", "1", "X:T", "Y:F", "T=f32,f64,i64,i32 F=f32",
		"coefficients:floats intercepts:floats post_transform:string=NONE targets:int=1", "",
		"Linear regression X*W^T+b.", nil},
	{"Normalizer", "1", "X:T", "Y:F", "T=f32,f64,i64,i32 F=f32", "norm:string=MAX", "",
		"Normalizes each row by its max, L1 or L2 norm.", nil},
	{"OneHotEncoder", "1", "X:T", "Y:F", "T=string,i64,i32,f32,f64 F=f32", "cats_int64s:ints cats_strings:strings zeros:int=1", "",
		"One-hot encodes each element over a category list (new last axis).", nil},
	{"SVMClassifier", "1", "X:T1", "Y:T2 Z:F", "T1=f32,f64,i64,i32 T2=string,i64 F=f32",
		"classlabels_ints:ints classlabels_strings:strings coefficients:floats kernel_params:floats kernel_type:string=LINEAR " +
			"post_transform:string=NONE prob_a:floats prob_b:floats rho:floats support_vectors:floats vectors_per_class:ints", "",
		"Support vector machine classifier (one-vs-one), optionally with Platt probabilities.", nil},
	{name: "SVMRegressor", versions: "1", in: "X:T", out: "Y:F", types: "T=f32,f64,i64,i32 F=f32",
		attrs: "coefficients:floats kernel_params:floats kernel_type:string=LINEAR n_supports:int=0 one_class:int=0 post_transform:string=NONE rho:floats support_vectors:floats",
		doc:   "Support vector machine regression or one-class SVM."},
	{"Scaler", "1", "X:T", "Y:F", "T=f32,f64,i64,i32 F=f32", "offset:floats scale:floats", "",
		"(X - offset) * scale per feature.", nil},
	{name: "TreeEnsemble", versions: "5", in: "X:T", out: "Y:T", types: "T=f32,f64,f16",
		attrs: "aggregate_function:int=1 leaf_targetids:ints leaf_weights:tensor membership_values:tensor n_targets:int " + "nodes_falseleafs:ints nodes_falsenodeids:ints nodes_featureids:ints nodes_hitrates:tensor nodes_missing_value_tracks_true:ints " + "nodes_modes:tensor nodes_splits:tensor nodes_trueleafs:ints nodes_truenodeids:ints post_transform:int=0 tree_roots:ints" + mlPackedAttrs,
		doc:   "Tree ensemble (regression or classification scores) with explicit leaves."},
	{"TreeEnsembleClassifier", "1 3", "X:T1", "Y:T2 Z:F", "T1=f32,f64,i64,i32 T2=string,i64 F=f32",
		"class_ids:ints class_nodeids:ints class_treeids:ints class_weights:floats class_weights_as_tensor:tensor>=3 " +
			"classlabels_int64s:ints classlabels_strings:strings " + mlTreeNodeAttrs + mlPackedAttrs, "",
		"Tree ensemble classifier: labels and per-class scores.", nil},
	{"TreeEnsembleRegressor", "1 3", "X:T", "Y:F", "T=f32,f64,i64,i32 F=f32",
		"aggregate_function:string=SUM n_targets:int target_ids:ints target_nodeids:ints target_treeids:ints target_weights:floats " +
			"target_weights_as_tensor:tensor>=3 " + mlTreeNodeAttrs + mlPackedAttrs, "",
		"Tree ensemble regressor.", nil},
	{"ZipMap", "1", "X:T1", "Z:T2", "T1=f32 T2=seq:f32", "classlabels_int64s:ints classlabels_strings:strings", "",
		"Turns each row of a [N, C] score tensor into a map from the class labels to the scores.", nil},
}

func init() {
	for _, d := range mlOpDefs {
		s, err := parseOpDef(d)
		if err != nil {
			panic(err)
		}
		s.Domain = MLDomain
		register(s)
	}
}
