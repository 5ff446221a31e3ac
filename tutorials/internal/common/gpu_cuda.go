//go:build cuda || cudaemu

package common

// Linking the CUDA backend here makes gpu(i) contexts available to every
// tutorial built with -tags cuda (-contexts gpu:0,gpu:1,...).
import _ "github.com/goluon/goluon/cuda"
