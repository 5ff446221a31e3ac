package ndtest

// The cases for the ops of nd/create.go: Zeros, Ones, Full, Scalar,
// FromSlice, FromSliceShaped, Arange, the ...Like constructors and Empty.

import (
	"fmt"
	"slices"

	"github.com/goluon/goluon/nd"
)

// confCreation checks the constructors (shape, dtype, context, values),
// then runs confRandom: the family "creation" covers nd/create.go and
// nd/random.go.
func confCreation(e confEnv) {
	e.run("Zeros", func(e confEnv) {
		e.check(nd.Zeros(e.dev, e.dt, 2, 3), []int{2, 3}, confConst(6, 0), confTolExact)
	})
	e.run("Ones", func(e confEnv) {
		e.check(nd.Ones(e.dev, e.dt, 4), []int{4}, confConst(4, 1), confTolExact)
		e.check(nd.Ones(e.dev, e.dt, 2, 1, 3), []int{2, 1, 3}, confConst(6, 1), confTolExact)
	})
	e.run("Full", func(e confEnv) {
		e.check(nd.Full(e.dev, e.dt, 2.5, 3, 4), []int{3, 4}, confConst(12, 2.5), confTolExact)
		e.check(nd.Full(e.dev, e.dt, -7, 1), []int{1}, []float64{-7}, confTolExact)
		e.check(nd.Full(e.dev, e.dt, 1, 0, 4), []int{0, 4}, nil, confTolExact)
	})
	e.run("Scalar", func(e confEnv) {
		s := nd.Scalar(e.dev, e.dt, 3.5)
		e.check(s, []int{1}, []float64{3.5}, confTolExact)
		if got := s.Scalar(); got != 3.5 {
			e.Errorf("Scalar() = %g, want 3.5", got)
		}
	})
	e.run("FromSlice", func(e confEnv) {
		v := e.round(confUniform(1, 24, -5, 5))
		e.check(e.arr(v, 2, 3, 4), []int{2, 3, 4}, v, confTolExact)
		e.check(e.arr(v), []int{24}, v, confTolExact) // no shape: 1-D
		e.check(e.arr(v[:1], 1, 1), []int{1, 1}, v[:1], confTolExact)
		e.check(e.arr(nil, 0), []int{0}, nil, confTolExact)
	})
	e.run("FromSliceShaped", func(e confEnv) {
		v := e.round(confUniform(2, 6, -5, 5))
		e.check(nd.FromSliceShaped(e.dev, v, []int{2, 3}).AsType(e.dt), []int{2, 3}, v, confTolExact)
		e.check(nd.FromSliceShaped(e.dev, v[:1], nil).AsType(e.dt), []int{}, v[:1], confTolExact) // no shape: 0-d
		e.check(nd.FromSliceShaped(e.dev, []float64{}, []int{0, 3}).AsType(e.dt), []int{0, 3}, nil, confTolExact)
	})
	for _, c := range []struct {
		start, stop, step float64
		want              []float64
	}{
		{0, 5, 1, []float64{0, 1, 2, 3, 4}},
		{1, 2, 0.25, []float64{1, 1.25, 1.5, 1.75}},
		{5, 0, -1.5, []float64{5, 3.5, 2, 0.5}},
		{-2, 1.5, 1, []float64{-2, -1, 0, 1}},
		{3, 4, 1, []float64{3}},
	} {
		e.run(fmt.Sprintf("Arange/%g_%g_%g", c.start, c.stop, c.step), func(e confEnv) {
			e.check(nd.Arange(e.dev, e.dt, c.start, c.stop, c.step), []int{len(c.want)}, c.want, confTolExact)
			if c.step == 1 { // whole numbers: as integers too
				e.checkAs(nd.Arange(e.dev, nd.Int64, c.start, c.stop, c.step), nd.Int64, []int{len(c.want)}, c.want, confTolExact)
			}
		})
	}
	e.run("Like", func(e confEnv) {
		a, _ := e.rand(2, -1, 1, 2, 0, 3)
		e.check(nd.ZerosLike(a), []int{2, 0, 3}, nil, confTolExact)
		b, _ := e.rand(3, -1, 1, 3, 2)
		e.check(nd.ZerosLike(b), []int{3, 2}, confConst(6, 0), confTolExact)
		e.check(nd.OnesLike(b), []int{3, 2}, confConst(6, 1), confTolExact)
		e.check(nd.FullLike(b, -0.5), []int{3, 2}, confConst(6, -0.5), confTolExact)
	})
	e.run("Empty", func(e confEnv) {
		for _, sh := range [][]int{{4, 5}, {2, 0, 3}, {1}, {7}} {
			a := nd.Empty(e.dev, e.dt, sh...)
			if !slices.Equal(a.Shape(), sh) || a.DType() != e.dt || a.Context() != e.dev || a.Size() != refNumel(sh) {
				e.Errorf("Empty(%v): got %v %v on %v size %d", sh, a.Shape(), a.DType(), a.Context(), a.Size())
			}
			if len(a.Float64s()) != refNumel(sh) {
				e.Errorf("Empty(%v): %d readable elements", sh, len(a.Float64s()))
			}
		}
	})
	confRandom(e) // random.go
}
