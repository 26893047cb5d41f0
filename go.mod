module github.com/cuvil/cuvil

go 1.24.0

require (
	github.com/dave/jennifer v1.7.1
	github.com/mmcloughlin/avo v0.5.0
	golang.org/x/mod v0.33.0
	golang.org/x/tools v0.42.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/x448/float16 v0.8.4 // indirect
	golang.org/x/sync v0.19.0 // indirect
)
