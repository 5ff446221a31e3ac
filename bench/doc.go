// Package bench holds Goluon's benchmarks: whole training steps, matrix
// products, each convolution layer of the tutorials, and the data
// pipeline, measured with testing.B and reported as samples/s, GFLOP/s or
// images/s. Run them with
//
//	go test ./bench/ -run '^$' -bench . -benchtime 3s
//
// except BenchmarkTrainStepLeNetRSS, whose peak-memory figure covers the
// whole process and so must run alone:
//
//	go test ./bench/ -run '^$' -bench 'TrainStepLeNetRSS$' -benchtime 200x
//
// make bench (compare.sh) runs them side by side with PyTorch.
package bench
