package nd

import (
	"math"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

// poolReluOp is z = MaxPool2x2(BiasRelu(x, b)) with a hand-written
// backward pass that runs Pool2DBackward then BiasReluBackward with their
// gradients laid out as layout says, which no op of nd does today:
//   - "apart": two buffers (the ops' layout);
//   - "in-place": the ReLU's gradient over the pooling's;
//   - "beside": both in one buffer at different offsets, the pooling's
//     read again afterwards;
//   - "over-dy": the ReLU's gradient written over the pooling's output
//     gradient (legal for the pair: BiasReluBackward does not read it).
func poolReluOp(x, b *NDArray, layout string) *NDArray {
	const op = "poolReluOp"
	n, c, h, w := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	size := n * c * h * w
	sess, dev, dt := x.Session(), x.st.dev, x.dtype
	cp := backend.ChannelParams{Outer: n, C: c, Inner: h * w, DType: dt, Device: dev}
	pp := backend.PoolParams{Type: backend.PoolMax, N: n, C: c, InH: h, InW: w, OutH: h / 2, OutW: w / 2, KH: 2, KW: 2,
		StrideH: 2, StrideW: 2, DType: dt, Device: dev}
	bk := x.be().(backend.BiasReluKernels)
	y := newArray(op, sess, dev, dt, x.shape)
	bk.BiasRelu(cp, y.arg(), x.arg(), b.arg())
	z := newArray(op, sess, dev, dt, []int{n, c, h / 2, w / 2})
	x.be().Pool2D(pp, z.arg(), y.arg())
	Record(op, z, []*NDArray{x, b}, func(g *NDArray, _ []bool) []*NDArray {
		db := newArray(op, sess, dev, dt, []int{c})
		pair := func(t, d, dy *NDArray) {
			x.be().Pool2DBackward(pp, t.arg(), y.arg(), z.arg(), dy.arg())
			backwardKernels(g, bk).BiasReluBackward(cp, d.arg(), db.arg(), t.arg(), y.arg())
		}
		switch layout {
		case "apart", "in-place":
			t := newArray(op, sess, dev, dt, x.shape)
			d := t
			if layout == "apart" {
				d = newArray(op, sess, dev, dt, x.shape)
			}
			pair(t, d, g)
			return []*NDArray{d, db}
		case "beside":
			big := newArray(op, sess, dev, dt, []int{2 * size})
			t, d := big.view(0, x.shape), big.view(size, x.shape)
			pair(t, d, g)
			return []*NDArray{Add(d, t), db}
		default: // over-dy
			big := newArray(op, sess, dev, dt, []int{size})
			dy := big.view(0, g.shape)
			Assign(dy, g)
			pair(newArray(op, sess, dev, dt, x.shape), big, dy)
			return []*NDArray{big.view(0, x.shape), db}
		}
	})
	return z
}

// TestFusePoolReluLayouts checks fusePoolRelu's conditions on the
// gradients' layout: it fuses the pair where the fused kernel gives the
// pair's results, declines where it would not, and the traced backward
// pass equals eager's bit for bit either way.
func TestFusePoolReluLayouts(t *testing.T) {
	dev := ctx.CPU(0)
	for _, tc := range []struct {
		layout string
		fused  int
	}{{"apart", 1}, {"in-place", 1}, {"beside", 0}, {"over-dy", 0}} {
		t.Run(tc.layout, func(t *testing.T) {
			Seed(1)
			x := RandomNormal(dev, Float32, 0, 1, 2, 3, 8, 8)
			b := RandomNormal(dev, Float32, 0, 1, 3)
			head := RandomNormal(dev, Float32, 0, 1, 2, 3, 4, 4)
			x.AttachGrad(GradWrite)
			b.AttachGrad(GradWrite)
			grads := func(f func() *NDArray) []float64 {
				exit := EnterRecording(false)
				z := f()
				exit()
				Backward([]*NDArray{z}, []*NDArray{head}, false)
				return append(x.Grad().Float64s(), b.Grad().Float64s()...)
			}
			want := grads(func() *NDArray { return poolReluOp(x, b, tc.layout) })
			exit := EnterRecording(false)
			g := Trace(tc.layout, func(in []*NDArray) []*NDArray { return []*NDArray{poolReluOp(in[0], in[1], tc.layout)} },
				[]*NDArray{x, b}, nil)
			exit()
			defer g.Release()
			if got := g.Stats().FusedBackward; got != tc.fused {
				t.Errorf("%d pairs fused, want %d", got, tc.fused)
			}
			got := grads(func() *NDArray { return g.Call([]*NDArray{x, b})[0] })
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("gradient [%d] = %v traced, %v eager", i, got[i], want[i])
				}
			}
		})
	}
}
