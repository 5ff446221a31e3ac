package nd

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/goluon/goluon/ctx"
)

// Random numbers come from one generator per context, all derived from a
// single seed (0 until Seed is called). Per-context streams keep results
// reproducible when several devices draw concurrently, as dropout does
// during a multi-device forward pass.
var rngs struct {
	mu    sync.Mutex
	seed  uint64
	epoch uint64 // counts calls to Seed, so sessions know to rederive
	gens  map[ctx.Context]*lockedRand
}

type lockedRand struct {
	mu  sync.Mutex
	r   *rand.Rand
	pcg *rand.PCG // r's source, whose state RNGState saves (nil in a checkpointed function's session)
}

// Seed resets every context's random generator from seed, so that the same
// program with the same seed draws the same numbers.
func Seed(seed uint64) {
	rngs.mu.Lock()
	defer rngs.mu.Unlock()
	rngs.seed = seed
	rngs.epoch++
	rngs.gens = nil
}

// CurrentSeed returns the seed last given to Seed (0 by default). Packages
// that derive their own generators (parameter initialisation) use it so that
// one call to Seed makes a whole program reproducible.
func CurrentSeed() uint64 {
	rngs.mu.Lock()
	defer rngs.mu.Unlock()
	return rngs.seed
}

// rngFor returns s's generator for dev. The default session uses the
// process-wide generators; another session has its own, derived from the
// seed and its name (and rederived when Seed is called again), so that
// its draws do not depend on what other sessions draw meanwhile.
func (s *Session) rngFor(dev ctx.Context) *lockedRand {
	if s == defaultSession || s.born {
		rngs.mu.Lock()
		defer rngs.mu.Unlock()
		return derive(&rngs.gens, dev, rngs.seed, "")
	}
	if s.draws != nil {
		return s.draws.rngFor(s, dev)
	}
	rngs.mu.Lock()
	seed, epoch := rngs.seed, rngs.epoch
	rngs.mu.Unlock()
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	if s.epoch != epoch {
		s.gens, s.epoch = nil, epoch
	}
	return derive(&s.gens, dev, seed, "/"+s.name)
}

// drawSeed takes one value from dev's generator in s: the seed of a
// dropout mask.
func (s *Session) drawSeed(dev ctx.Context) uint64 {
	g := s.rngFor(dev)
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.r.Uint64()
}

func derive(gens *map[ctx.Context]*lockedRand, dev ctx.Context, seed uint64, suffix string) *lockedRand {
	if *gens == nil {
		*gens = map[ctx.Context]*lockedRand{}
	}
	g := (*gens)[dev]
	if g == nil {
		h := fnv.New64a()
		h.Write([]byte(dev.String() + "/" + strconv.FormatUint(seed, 10) + suffix))
		pcg := rand.NewPCG(seed, h.Sum64())
		g = &lockedRand{r: rand.New(pcg), pcg: pcg}
		(*gens)[dev] = g
	}
	return g
}

// hostRandom fills a host slice of n values using dev's generator and
// uploads it as a new array.
func hostRandom(op string, s *Session, dev ctx.Context, dt DType, shape []int, draw func(r *rand.Rand) float64) *NDArray {
	checkShape(op, shape)
	checkFloatDType(op, dt)
	n := numel(shape)
	a := newArray(op, s, dev, dt, shape)
	if r := currentTrace(); r != nil {
		r.random(a, s, func(s *Session) any { return drawHost(s.rngFor(dev), dt, n, draw) })
		return a
	}
	a.be().Write(a.st.buf, a.off, drawHost(s.rngFor(dev), dt, n, draw))
	return a
}

// drawHost draws n values of dt from g.
func drawHost(g *lockedRand, dt DType, n int, draw func(r *rand.Rand) float64) any {
	g.mu.Lock()
	defer g.mu.Unlock()
	if dt == Float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = draw(g.r)
		}
		return v
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(draw(g.r))
	}
	return v
}

// roundedTo returns v as an array of dt holds it (dt floating).
func roundedTo(dt DType, v float64) float64 {
	switch dt {
	case Float32:
		return float64(float32(v))
	case Float16:
		return float64(F16From(float32(v)).Float32())
	case BFloat16:
		return float64(BF16From(float32(v)).Float32())
	}
	return v
}

// RandomUniform draws values uniformly from [lo, hi).
func RandomUniform(dev ctx.Context, dt DType, lo, hi float64, shape ...int) *NDArray {
	return creator().RandomUniform(dev, dt, lo, hi, shape...)
}

// RandomUniform is the package-level RandomUniform making an array of s, from s's
// generators.
func (s *Session) RandomUniform(dev ctx.Context, dt DType, lo, hi float64, shape ...int) *NDArray {
	if hi < lo {
		fail("RandomUniform", ErrArgument, "hi %g < lo %g", hi, lo)
	}
	return hostRandom("RandomUniform", s, dev, dt, shape, func(r *rand.Rand) float64 {
		// A draw that rounds up to hi in dt is drawn again, so that the
		// interval stays half-open in every dtype; an interval too narrow
		// for dt to hold a value inside gets its rounded draws.
		for try := 0; ; try++ {
			v := lo + (hi-lo)*r.Float64()
			if hi <= lo || roundedTo(dt, v) < hi || try == 64 {
				return v
			}
		}
	})
}

// RandomNormal draws values from a normal distribution.
func RandomNormal(dev ctx.Context, dt DType, mean, std float64, shape ...int) *NDArray {
	return creator().RandomNormal(dev, dt, mean, std, shape...)
}

// RandomNormal is the package-level RandomNormal making an array of s, from s's
// generators.
func (s *Session) RandomNormal(dev ctx.Context, dt DType, mean, std float64, shape ...int) *NDArray {
	if std < 0 {
		fail("RandomNormal", ErrArgument, "negative standard deviation %g", std)
	}
	return hostRandom("RandomNormal", s, dev, dt, shape, func(r *rand.Rand) float64 {
		return mean + std*r.NormFloat64()
	})
}

// RandomUniformLike draws uniform values with a's shape, dtype, context and
// session.
func RandomUniformLike(a *NDArray, lo, hi float64) *NDArray {
	defer checkLive("RandomUniformLike", a).done()
	return a.Session().RandomUniform(a.st.dev, a.dtype, lo, hi, a.shape...)
}

// RandomNormalLike draws normal values with a's shape, dtype, context and
// session.
func RandomNormalLike(a *NDArray, mean, std float64) *NDArray {
	defer checkLive("RandomNormalLike", a).done()
	return a.Session().RandomNormal(a.st.dev, a.dtype, mean, std, a.shape...)
}

// RNGState returns the state of s's random generator for dev (PyTorch's
// get_rng_state): after SetRNGState with it, dropout masks and random
// arrays drawn on dev repeat those drawn after the call. Inside a
// checkpointed function (Checkpoint), whose draws come from its caller's
// generators, it is an ErrArgument error.
func (s *Session) RNGState(dev ctx.Context) []byte {
	g := s.rngFor(dev)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pcg == nil {
		fail("RNGState", ErrArgument, "inside a checkpointed function: its draws come from its caller's generator")
	}
	b, _ := g.pcg.MarshalBinary() // a PCG always marshals
	return b
}

// SetRNGState restores a state RNGState returned for dev.
func (s *Session) SetRNGState(dev ctx.Context, state []byte) error {
	g := s.rngFor(dev)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pcg == nil {
		return fmt.Errorf("nd: SetRNGState on %v inside a checkpointed function: its draws come from its caller's generator", dev)
	}
	if err := g.pcg.UnmarshalBinary(state); err != nil {
		return fmt.Errorf("nd: SetRNGState on %v: %w", dev, err)
	}
	return nil
}
