package templates

func init() {
	register("SequenceConstruct", SequenceConstruct)
	register("SequenceEmpty", SequenceEmpty)
	register("SequenceAt", SequenceAt)
	register("SequenceInsert", SequenceInsert)
	register("SequenceErase", SequenceErase)
	register("SequenceLength", SequenceLength)
	register("SplitToSequence", SplitToSequence)
	register("ConcatFromSequence", ConcatFromSequence)
	register("Optional", Optional)
	register("OptionalHasElement", OptionalHasElement)
	register("OptionalGetElement", OptionalGetElement)
}
