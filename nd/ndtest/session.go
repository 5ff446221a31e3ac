package ndtest

import (
	"math"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// SessionChecks runs every gradient case on dev in sessions of its own and
// checks that ops carry the session of their inputs to their results,
// forward and backward, and that a session is independent of the default
// session's state:
//
//   - run in a new nd.Session while the default session is in the opposite
//     state (recording in training mode for a predict-mode case, paused in
//     predict mode for a training-mode case), the output belongs to the
//     session, and a default-session scope open around the run tracks
//     nothing the run made;
//   - the output and the input gradients equal, bit for bit, those of the
//     same case in a session of the same name (hence the same random
//     draws) while the default session is in the case's own state, and,
//     for ops that draw no random numbers, those of the default-session
//     run.
func SessionChecks(t *testing.T, dev ctx.Context) {
	forEachGradCase(t, dev, func(t *testing.T, c gradCase) {
		for _, adopt := range []string{"all", "first", "last"} {
			if adopt != "all" && c.chain {
				continue // its ops on neutral inputs alone run in the default session, by design
			}
			t.Run(adopt, func(t *testing.T) { sessionCheck(t, c, adopt) })
		}
	})
}

// sessionCheck is SessionChecks for one case; adopt says which inputs the
// session adopts ("all", or only the "first" or "last" one, the others
// staying neutral as parameters do).
func sessionCheck(t *testing.T, c gradCase, adopt string) {
	def := nd.DefaultSession()
	{
		defer confRecover(t)
		defOut, defGrads := runCase(c, def, c.in(), "all", nil)
		var refOut []float64
		var refGrads [][]float64
		def.RecordMode(c.tol.Train, func() { // the default session in the case's own state
			refOut, refGrads = runCase(c, nd.NewSession("check"), c.in(), adopt, nil)
		})

		sess := nd.NewSession("check")
		in := c.in()
		outer := nd.NewScope() // a default-session scope: must stay empty
		defer outer.Close()
		var out []float64
		var grads [][]float64
		run := func() {
			out, grads = runCase(c, sess, in, adopt, func(o *nd.NDArray) {
				if o.Session() != sess {
					t.Errorf("output belongs to %v, want %v", o.Session(), sess)
				}
			})
		}
		if c.tol.Train {
			def.Pause(run)
		} else {
			def.Record(run)
		}
		if n := outer.Len(); n != 0 {
			t.Errorf("%d arrays made during the session run were tracked by the default session's scope", n)
		}
		random := strings.Contains(c.op, "Dropout")
		for _, ref := range []struct {
			name  string
			out   []float64
			grads [][]float64
			skip  bool
		}{{"a session's run with the default session in the same state", refOut, refGrads, false}, {"the default-session run", defOut, defGrads, random}} {
			if ref.skip {
				continue
			}
			if !same(out, ref.out) {
				t.Errorf("output differs from %s", ref.name)
			}
			for i := range ref.grads {
				if !same(grads[i], ref.grads[i]) {
					t.Errorf("gradient of input %d differs from %s", i, ref.name)
				}
			}
		}
	}
}

// runCase adopts c's inputs (all, or only the first or last one) into s,
// runs c.f recording in s and backpropagates Σ out, returning the output
// and the gradients of the inputs that take one (nil for the others).
// check, when set, sees the output.
func runCase(c gradCase, s *nd.Session, in []*nd.NDArray, adopt string, check func(*nd.NDArray)) (out []float64, grads [][]float64) {
	scope := s.NewScope()
	defer scope.Close()
	skip := map[int]bool{}
	for _, i := range c.noGrad {
		skip[i] = true
	}
	for i, a := range in {
		if adopt == "all" || (adopt == "first" && i == 0) || (adopt == "last" && i == len(in)-1) {
			s.Adopt(a)
		}
		if !skip[i] {
			a.AttachGrad(nd.GradWrite)
		}
	}
	s.RecordMode(c.tol.Train, func() {
		nd.Seed(gradSeed)
		o := c.f(in)
		if check != nil {
			check(o)
		}
		out = o.Float64s()
		nd.Backward([]*nd.NDArray{nd.Sum(o)}, nil, false)
	})
	grads = make([][]float64, len(in))
	for i, a := range in {
		if !skip[i] {
			grads[i] = a.Grad().Float64s()
		}
	}
	return out, grads
}

// same reports whether a and b are equal bit for bit (NaNs equal).
func same(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}
