// Package onnxpb holds the Go types of ONNX's protobuf schema, generated
// from the onnx.proto of Debian's python3-onnx (1.12) by Debian's
// protobuf-compiler and protoc-gen-go (google.golang.org/protobuf):
//
//	apt-get install protobuf-compiler python3-onnx
//	GOBIN=/tmp/gobin go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	go generate ./gluon/onnx/internal/onnxpb
package onnxpb

//go:generate env PATH=/tmp/gobin:$PATH protoc -I/usr/lib/python3/dist-packages/onnx --go_out=. --go_opt=paths=source_relative --go_opt=Monnx.proto=github.com/goluon/goluon/gluon/onnx/internal/onnxpb onnx.proto
