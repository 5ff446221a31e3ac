package nd

import "github.com/goluon/goluon/nd/cpu"

// DedicateCores declares that n more goroutines now run CPU kernels at
// once, each on a core of its own, until release is called: while they
// take every core (GOMAXPROCS), each CPU kernel runs on its calling
// goroutine alone, with the same results. gluon.ForEachDevice declares
// its CPU contexts' goroutines when it pins them to CPUs, and a Trainer
// over CPU contexts its per-context goroutines in Step (not pinned).
func DedicateCores(n int) (release func()) { return cpu.Dedicate(n) }

// DedicatedCores returns how many goroutines DedicateCores has declared
// and not released.
func DedicatedCores() int { return cpu.Dedicated() }
