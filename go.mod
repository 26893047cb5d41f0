module github.com/cuvil/cuvil

go 1.26.8

require (
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/mmcloughlin/avo v0.5.0 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
