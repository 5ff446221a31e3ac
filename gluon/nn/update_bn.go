package nn

import (
	"fmt"
	"iter"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// UpdateBatchNorm recomputes the running statistics of every BatchNorm in
// net as the plain average of their batch statistics over batches
// (PyTorch's swa_utils.update_bn): for weights that no training pass
// produced statistics for, such as an SWA average (gluon.Averaged) or
// weights loaded from elsewhere. It resets the statistics, runs net on
// each batch in training mode without recording, with each layer's
// momentum set so that batch k weighs 1/k, then restores the momenta and
// copies the statistics to every context of their parameters. Batches go
// to net as they are: on the context the network runs on. Hybridized
// blocks are cleared before each batch and at the end (their traces hold
// the momenta), and BatchNorms that normalise with their running
// statistics (UseGlobalStats) are left alone. A SyncBatchNorm is an error
// (its exchange would wait for the other contexts).
func UpdateBatchNorm(net gluon.Block, batches iter.Seq[*nd.NDArray]) (err error) {
	var bns []*BatchNorm
	var hybrids []*gluon.HybridBlock
	var walk func(c gluon.Component) error
	walk = func(c gluon.Component) error {
		switch b := c.(type) {
		case *SyncBatchNorm:
			return fmt.Errorf("nn.UpdateBatchNorm: %s is a SyncBatchNorm", b.Meta().Name())
		case *BatchNorm:
			if !b.opts.UseGlobalStats {
				bns = append(bns, b)
			}
		case *gluon.HybridBlock:
			hybrids = append(hybrids, b)
			return walk(b.Unwrap())
		}
		for _, ch := range c.Meta().Children() {
			if err := walk(ch); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(net); err != nil {
		return err
	}
	saved := make([]float64, len(bns))
	for i, b := range bns {
		saved[i] = b.momentum
		if b.RunningMean.Initialized() {
			b.RunningMean.SetData(nd.ZerosLike(b.RunningMean.ListData()[0]))
			b.RunningVar.SetData(nd.OnesLike(b.RunningVar.ListData()[0]))
		}
	}
	clear := func() {
		for _, h := range hybrids {
			h.Clear()
		}
	}
	defer func() {
		for i, b := range bns {
			b.momentum = saved[i]
		}
		clear()
	}()
	k := 0
	var dev ctx.Context
	err = nd.Catch(func() {
		for x := range batches {
			k++
			for _, b := range bns {
				b.momentum = float64(k-1) / float64(k)
			}
			clear()
			dev = x.Context()
			x.Session().TrainMode(func() { net.Forward(x) })
		}
	})
	if err != nil {
		return fmt.Errorf("nn.UpdateBatchNorm: batch %d: %w", k, err)
	}
	if k == 0 {
		return nil
	}
	for _, b := range bns { // the other replicas follow the one that ran
		for _, p := range []*gluon.Parameter{b.RunningMean, b.RunningVar} {
			if len(p.Contexts()) > 1 {
				src := p.Data(dev).Copy()
				p.SetData(src)
				src.Release()
			}
		}
	}
	return nil
}
