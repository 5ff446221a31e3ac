//go:build cuda || cudaemu

package cuda

import (
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/internal/traintest"
	"github.com/goluon/goluon/nd"
)

// TestDataParallelNoHostSync trains LeNet on 4 GPU contexts: a whole step
// (the batch's copies, forward, backward with the buckets summed during
// it, Step) makes the host wait for no GPU, and each context receives at
// most 2(N−1)/N of the gradients' bytes besides its part of the batch.
// Reading the loss afterwards is the step's one host synchronisation.
func TestDataParallelNoHostSync(t *testing.T) {
	if ctx.NumGPUs() < 4 {
		t.Skip("needs 4 GPU contexts (GOLUON_VIRTUAL_GPUS=4)")
	}
	devs := []ctx.Context{ctx.GPU(0), ctx.GPU(1), ctx.GPU(2), ctx.GPU(3)}
	nd.Seed(3)
	net := modelzoo.LeNet()
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
		t.Fatal(err)
	}
	tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.05), "device", gluon.TrainerOpts{FirstBucketBytes: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	const batch = 32
	x := nd.RandomUniform(ctx.CPU(0), nd.Float32, 0, 1, batch, 1, 28, 28)
	lab := make([]float32, batch)
	for i := range lab {
		lab[i] = float32(i % 10)
	}
	y := nd.FromSlice(ctx.CPU(0), lab)
	lossFn := loss.NewSoftmaxCrossEntropy().Forward
	total := 0 // the gradients' bytes, once the shapes are known
	var losses []*nd.NDArray
	var readSyncs int64 // gpu(0)'s host syncs for the loss read after the step before
	for step := range 4 {
		s := nd.NewScope()
		losses = losses[:0]
		xs, _ := gluon.SplitAndLoad(x, devs, true)
		ys, _ := gluon.SplitAndLoad(y, devs, true)
		if err := recordBackward(net, lossFn, xs, ys, devs, &losses); err != nil {
			t.Fatal(err)
		}
		if err := tr.Step(batch); err != nil {
			t.Fatal(err)
		}
		if total == 0 {
			for _, p := range params.List() {
				total += p.Data(devs[0]).Size() * 4
			}
		}
		st := tr.Stats()
		before := nd.Counters(devs[0])
		l := losses[0].Float32s() // the one wait of the step
		prevRead := readSyncs
		if readSyncs = nd.Counters(devs[0]).Sub(before).HostSyncs; readSyncs != 1 {
			t.Errorf("reading the loss made %d host syncs, want 1", readSyncs)
		}
		s.Close()
		if step < 2 {
			continue // the deferred shapes, cuDNN's plans and the pools settle first
		}
		if st.Overlapped == 0 {
			t.Errorf("step %d: no bucket was summed during backward (%d buckets)", step, st.Buckets)
		}
		for d, c := range st.Contexts {
			if d == 0 { // the interval began before the last step's loss read
				c.HostSyncs -= prevRead
			}
			if c.HostSyncs != 0 {
				t.Errorf("step %d: %v: %d host syncs in the step besides reading the loss (want 0)", step, devs[d], c.HostSyncs)
			}
			batchBytes := batch / 4 * (28*28 + 1) * 4
			limit := 2*3*total/4 + 2*3*4*st.Buckets
			if got := int(c.BytesIn) - batchBytes; got > limit {
				t.Errorf("step %d: %v received %d bytes besides its batch, more than 2(N-1)/N of the %d gradient bytes", step, devs[d], got, total)
			}
		}
		t.Logf("step %d: loss[0] %.4f, %d buckets (%d during backward), gpu0: %+v", step, l[0], st.Buckets, st.Overlapped, st.Contexts[0])
	}
}

// recordBackward runs forward and backward on every device inside one
// recording scope and keeps each device's loss.
func recordBackward(net gluon.Block, lossFn traintest.Loss, xs, ys []*nd.NDArray, devs []ctx.Context, losses *[]*nd.NDArray) error {
	*losses = make([]*nd.NDArray, len(devs))
	var err error
	nd.DefaultSession().Record(func() {
		err = gluon.ForEachDevice(devs, func(i int, _ ctx.Context) error {
			l := lossFn(net.Forward(xs[i]), ys[i])
			nd.Backward([]*nd.NDArray{l}, nil, false)
			(*losses)[i] = l
			return nil
		})
	})
	return err
}
