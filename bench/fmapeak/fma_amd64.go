package main

import "github.com/goluon/goluon/nd/cpu"

// fma256 runs n iterations of 12 independent 256-bit float32 FMAs.
//
//go:noescape
func fma256(n int)

// fma512 runs n iterations of 12 independent 512-bit float32 FMAs.
//
//go:noescape
func fma512(n int)

// kernels are the loops this CPU can run, widest last, with the flops of
// one iteration.
func kernels() []kernel {
	var ks []kernel
	if cpu.DetectedISA() >= cpu.ISAAVX2 {
		ks = append(ks, kernel{"256-bit", 12 * 8 * 2, fma256})
	}
	if cpu.DetectedISA() >= cpu.ISAAVX512 {
		ks = append(ks, kernel{"512-bit", 12 * 16 * 2, fma512})
	}
	return ks
}
