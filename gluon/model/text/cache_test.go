package text_test

import (
	"errors"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/internal/numcmp"
	"github.com/goluon/goluon/nd"
)

// TestCacheMatchesForward: feeding a batch of two sequences through
// ForwardCached in pieces (a prompt, single tokens, a chunk) gives the
// logits Forward gives on the whole sequences, piece by piece.
func TestCacheMatchesForward(t *testing.T) {
	dev := ctx.CPU(0)
	m := loadTiny(t, tinyConfig())
	const total = 14
	seqs := make([][]int64, 2)
	for b := range seqs {
		for i := range total {
			seqs[b] = append(seqs[b], int64((i*31+b*17+5)%97))
		}
	}
	for _, pieces := range [][]int{{5, 1, 1, 1, 3, 3}, {1, 1, 12}, {14}} {
		var full []float32
		autograd.PredictMode(func() { full = m.Forward(idsArray(dev, seqs)).Float32s() })
		c := m.NewCache()
		at := 0
		for _, n := range pieces {
			piece := [][]int64{seqs[0][at : at+n], seqs[1][at : at+n]}
			var got []float32
			autograd.PredictMode(func() { got = m.ForwardCached(idsArray(dev, piece), c).Float32s() })
			var want []float32
			for b := range 2 {
				row := full[b*total*97:]
				want = append(want, row[at*97:(at+n)*97]...)
			}
			if r := numcmp.RelL2(got, want); r > 1e-6 {
				t.Errorf("pieces %v: positions %d..%d: relative L2 difference %.3g from Forward", pieces, at, at+n, r)
			}
			at += n
			if c.Len() != at {
				t.Errorf("pieces %v: the cache holds %d positions, want %d", pieces, c.Len(), at)
			}
		}
		c.Release()
		if c.Len() != 0 {
			t.Errorf("a released cache holds %d positions", c.Len())
		}
	}
}

// TestCacheErrors: misuses of the cache panic with the kind of error
// they are.
func TestCacheErrors(t *testing.T) {
	dev := ctx.CPU(0)
	m := loadTiny(t, tinyConfig())
	other := text.NewGPT2(text.GPT2Config{VocabSize: 97, NPositions: 32, NEmbd: 48, NLayer: 3, NHead: 4})
	ids := func(b, n int) *nd.NDArray { return nd.Zeros(dev, nd.Int64, b, n) }
	for _, tc := range []struct {
		name string
		run  func()
		kind nd.ErrorKind
	}{
		{"nil cache", func() { m.ForwardCached(ids(1, 2), nil) }, nd.ErrArgument},
		{"another model's cache", func() { m.ForwardCached(ids(1, 2), other.NewCache()) }, nd.ErrArgument},
		{"another batch", func() {
			c := m.NewCache()
			defer c.Release()
			m.ForwardCached(ids(2, 3), c)
			m.ForwardCached(ids(1, 1), c)
		}, nd.ErrShape},
		{"past n_positions", func() {
			c := m.NewCache()
			defer c.Release()
			m.ForwardCached(ids(1, 30), c)
			m.ForwardCached(ids(1, 3), c)
		}, nd.ErrShape},
		{"another context", func() {
			c := m.NewCache()
			defer c.Release()
			m.ForwardCached(ids(1, 3), c)
			m.ForwardCached(nd.Zeros(ctx.CPU(1), nd.Int64, 1, 1), c)
		}, nd.ErrContext},
		{"recording", func() {
			autograd.Record(func() { m.ForwardCached(ids(1, 2), m.NewCache()) })
		}, nd.ErrArgument},
		{"float ids", func() { m.Forward(nd.Zeros(dev, nd.Float32, 1, 2)) }, nd.ErrShape},
		{"too long", func() { m.Forward(ids(1, 33)) }, nd.ErrShape},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			autograd.PredictMode(func() { err = nd.Catch(tc.run) })
			if !errors.Is(err, &nd.Error{Kind: tc.kind}) {
				t.Errorf("%v, want an error of kind %v", err, tc.kind)
			}
		})
	}
}
