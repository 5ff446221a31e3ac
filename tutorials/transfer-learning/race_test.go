//go:build race

package main

// Under the race detector, which slows the CPU backend's Go loops several
// times, the smoke test trains on 96 generated images (about 48 per task)
// instead of 160.
func init() { smokeLimit = "96" }
