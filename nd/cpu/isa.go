package cpu

import (
	"fmt"
	"os"
	"strings"
)

// ISA is a level of vector instructions the CPU kernels may use.
type ISA int

// The levels, each including the ones before it.
const (
	// ISAGeneric is plain Go (and gonum): every CPU and architecture.
	ISAGeneric ISA = iota
	// ISAAVX2 is AVX2 with FMA on 256-bit registers: the assembly GEMM,
	// Winograd, pooling, batch-norm, bias+ReLU and elementwise kernels.
	ISAAVX2
	// ISAAVX512 is AVX-512 F, BW and VL with the OS saving the ZMM state:
	// sgemm's 6×32 ZMM micro-kernel (sgemm512_amd64.s), the direct
	// convolution's 8×48 tile (convdirect_amd64.s) and ZMM twins of the
	// elementwise, reduction, bias+ReLU, batch-norm, 2×2 max-pooling and
	// Winograd row kernels (*512_amd64.s, chosen once in
	// kernels512_amd64.go): the same results bit for bit, except the
	// float32 sums (Sum, batch norm's statistics, the bias gradient), which
	// add in another order and agree to (n+16)·2⁻⁵³·Σ|terms|. sgemm's
	// packing kernels remain AVX2.
	ISAAVX512
)

var isaNames = [...]string{"generic", "avx2", "avx512"}

// String returns "generic", "avx2" or "avx512", the values $GOLUON_CPU takes.
func (l ISA) String() string {
	if l >= 0 && int(l) < len(isaNames) {
		return isaNames[l]
	}
	return fmt.Sprintf("ISA(%d)", int(l))
}

// EnvISA is the environment variable that caps the kernels' level:
// GOLUON_CPU=generic or avx2 selects that path on a CPU that could do
// more (to compare paths, or to rule a kernel out); a level the CPU lacks
// is not taken.
const EnvISA = "GOLUON_CPU"

var detected = detectISA()

// active is the level the kernels use, fixed at start-up.
var active, activeNote = chooseISA(os.Getenv(EnvISA), detected)

// DetectedISA returns the best level this CPU and operating system support.
func DetectedISA() ISA { return detected }

// ActiveISA returns the level the kernels use: DetectedISA, capped by
// $GOLUON_CPU.
func ActiveISA() ISA { return active }

// ISAReport says in one line which level is active and why (the detected
// level, the environment's request, a request that could not be honoured),
// and whether bfloat16 products run on AVX512_BF16.
func ISAReport() string {
	bf16 := ""
	if useBF16Kernel {
		bf16 = ", bfloat16 GEMM on AVX512_BF16"
	}
	return fmt.Sprintf("cpu kernels: %s (detected %s%s)%s", active, detected, activeNote, bf16)
}

// chooseISA returns the level for a $GOLUON_CPU value on a CPU of level
// det, and a note on how the value was taken.
func chooseISA(env string, det ISA) (ISA, string) {
	env = strings.ToLower(strings.TrimSpace(env))
	if env == "" {
		return det, ""
	}
	for l, name := range isaNames {
		if env != name {
			continue
		}
		if ISA(l) > det {
			return det, fmt.Sprintf("; %s=%s is beyond this CPU, ignored", EnvISA, env)
		}
		return ISA(l), fmt.Sprintf("; %s=%s", EnvISA, env)
	}
	return det, fmt.Sprintf("; %s=%q is not one of %s, ignored", EnvISA, env, strings.Join(isaNames[:], ", "))
}
