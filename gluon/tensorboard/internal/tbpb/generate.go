// Package tbpb holds the Go types of the TensorBoard event-file messages
// goluon writes (event.proto: field numbers as TensorFlow's), generated
// by Debian's protobuf-compiler and protoc-gen-go
// (google.golang.org/protobuf):
//
//	apt-get install protobuf-compiler
//	GOBIN=/tmp/gobin go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	go generate ./gluon/tensorboard/internal/tbpb
package tbpb

//go:generate env PATH=/tmp/gobin:$PATH protoc -I. --go_out=. --go_opt=paths=source_relative event.proto
