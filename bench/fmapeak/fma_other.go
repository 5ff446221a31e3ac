//go:build !amd64

package main

// kernels: the FMA loops are written for amd64 only.
func kernels() []kernel { return nil }
