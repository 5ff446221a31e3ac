//go:build mpi

package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/kvstore/dist"
	"github.com/goluon/goluon/kvstore/mpi"
	"github.com/goluon/goluon/nd"
)

// benchStep times training steps of one network with dist_sync: each
// process trains on cpu(0) with its own batch; the step time, the share of
// it that Step spent waiting for the gradient sums (the exchange not hidden
// behind backward) and the throughput over all
// processes are the slowest rank's medians over reps repetitions.
//
// With timeline, every rank also prints the 10th, 50th and 90th
// percentiles of its measured steps' forward and backward pass (which
// includes starting the buckets, and so the control exchange that waits
// for the other ranks) and of its Step, and its control exchanges' time
// per step.
func benchStep(comm *mpi.Comm, name string, batch, steps, reps int, model string, latency time.Duration, bucket int, timeline bool) error {
	np := comm.Size()
	var net gluon.Block
	var opt optimizer.Optimizer
	var shape []int
	switch name {
	case "lenet":
		if batch == 0 {
			batch = 128 / np
		}
		net, opt, shape = modelzoo.LeNet(), optimizer.NewSGD(0.04), []int{batch, 1, 28, 28}
	case "cifar":
		if batch == 0 {
			batch = 32
		}
		net, opt, shape = modelzoo.KerasCIFARCNN(), optimizer.NewRMSProp(1e-4), []int{batch, 3, 32, 32}
	default:
		return fmt.Errorf("unknown network %q (lenet or cifar)", name)
	}
	dev := []ctx.Context{ctx.CPU(0)}
	nd.Seed(1)
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Xavier{}, dev, false); err != nil {
		return err
	}
	x := nd.RandomUniform(dev[0], nd.Float32, 0, 1, shape...).Persist()
	labels := make([]float32, batch)
	for i := range labels {
		labels[i] = float32(i % 10)
	}
	y := nd.FromSlice(dev[0], labels).Persist()
	autograd.Pause(func() { net.Forward(x).Release() }) // deferred shapes
	tr, err := gluon.NewTrainer(params, opt, dist.Kind, gluon.TrainerOpts{BucketBytes: bucket, FirstBucketBytes: bucket})
	if err != nil {
		return err
	}
	kv := tr.KVStore().(*dist.Store)
	lossFn := loss.NewSoftmaxCrossEntropy()
	var exposed time.Duration       // Step's time on the gradient sums, not hidden behind backward
	var passes, stepCalls []float64 // µs per measured step, with timeline
	measuring := false
	step := func() error {
		s := nd.NewScope()
		defer s.Close()
		t0 := time.Now()
		autograd.Record(func() { autograd.Backward(lossFn.Forward(net.Forward(x), y)) })
		t1 := time.Now()
		err := tr.Step(batch)
		if measuring {
			passes = append(passes, float64(t1.Sub(t0).Microseconds()))
			stepCalls = append(stepCalls, float64(time.Since(t1).Microseconds()))
		}
		exposed += tr.Stats().ReduceTime
		return err
	}
	for range 3 { // warm up pools and buffers
		if err := step(); err != nil {
			return err
		}
	}
	var stepTimes, shares, backgrounds []float64
	measuring = timeline
	ctrl0 := kv.Stats().Time
	for range reps {
		if err := comm.Barrier(); err != nil {
			return err
		}
		before := kv.Stats()
		exposed = 0
		t0 := time.Now()
		for range steps {
			if err := step(); err != nil {
				return err
			}
		}
		el := time.Since(t0).Seconds() / float64(steps)
		ex := exposed.Seconds() / float64(steps)
		bg := (kv.Stats().Background - before.Background).Seconds() / float64(steps)
		worst, err := slowest(comm, el)
		if err != nil {
			return err
		}
		share, err := slowest(comm, ex/el)
		if err != nil {
			return err
		}
		bgWorst, err := slowest(comm, bg)
		if err != nil {
			return err
		}
		stepTimes, shares, backgrounds = append(stepTimes, worst), append(shares, share), append(backgrounds, bgWorst)
	}
	st := kv.Stats()
	if timeline {
		fmt.Printf("%s rank %d: forward+backward p10/p50/p90 %s µs, Step %s µs, control exchanges %.0f µs a step\n",
			name, comm.Rank(), percentiles(passes), percentiles(stepCalls), float64((st.Time-ctrl0).Microseconds())/float64(reps*steps))
	}
	nParams, bytes := 0, 0
	for _, p := range params.List() {
		nParams++
		bytes += p.ListData()[0].Size() * 4
	}
	if comm.Rank() != 0 {
		return nil
	}
	t, share, bg := median(stepTimes), median(shares), median(backgrounds)
	fmt.Printf("%s: %d processes × batch %d: step %.2f ms, %.0f samples/s over all processes, exposed exchange %.1f%% of the step (Step waiting for the gradient sums), %.2f ms per step of bucket allreduces from start to completion; %d tensors (%s) in %.0f allreduce(s) per step\n",
		name, np, batch, t*1e3, float64(batch*np)/t, 100*share, bg*1e3, nParams, humanBytes(bytes), float64(st.Allreduces)/float64(reps*steps+3))
	fmt.Printf("JSON {\"kind\":\"step\",\"net\":%q,\"np\":%d,\"batch\":%d,\"step_seconds\":%.6f,\"exchange_share\":%.4f,\"background_seconds\":%.6f,\"samples_per_sec\":%.1f,\"grad_bytes\":%d,\"allreduces_per_step\":%.2f}\n",
		name, np, batch, t, share, bg, float64(batch*np)/t, bytes, float64(st.Allreduces)/float64(reps*steps+3))
	if model != "" {
		return predict(name, t*(1-share), bytes, model, latency)
	}
	return nil
}

// percentiles formats the 10th, 50th and 90th percentiles of v.
func percentiles(v []float64) string {
	v = slices.Clone(v)
	slices.Sort(v)
	n := len(v)
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f/%.0f/%.0f", v[n/10], v[n/2], v[n*9/10])
}

// predict prints the scaling model: a ring allreduce of S bytes over N
// workers takes 2(N−1)·α + 2(N−1)/N · S/B on a network of bandwidth B and
// per-message latency α, and a step that did not overlap computing with
// communicating would have efficiency T_compute / (T_compute +
// T_allreduce): a lower bound, since dist_sync's gradient buckets start
// their allreduces during the backward pass.
func predict(name string, compute float64, bytes int, nets string, latency time.Duration) error {
	fmt.Printf("scaling model for %s: compute %.2f ms per step per worker (measured), gradients %s, latency α = %v per message (assumed)\n",
		name, compute*1e3, humanBytes(bytes), latency)
	fmt.Printf("| network | workers | allreduce ms | efficiency |\n|---|---:|---:|---:|\n")
	for _, f := range strings.Split(nets, ",") {
		gbit, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || gbit <= 0 {
			return fmt.Errorf("-model %q: want Gbit/s values like 10,100", nets)
		}
		bw := gbit * 1e9 / 8
		for _, n := range []int{8, 64} {
			nf := float64(n)
			ar := 2*(nf-1)*latency.Seconds() + 2*(nf-1)/nf*float64(bytes)/bw
			eff := compute / (compute + ar)
			fmt.Printf("| %g Gbit/s | %d | %.3f | %.1f%% |\n", gbit, n, ar*1e3, 100*eff)
			fmt.Printf("JSON {\"kind\":\"model\",\"net\":%q,\"gbit\":%g,\"workers\":%d,\"allreduce_seconds\":%.6f,\"efficiency\":%.4f}\n", name, gbit, n, ar, eff)
		}
	}
	return nil
}

func humanBytes(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}
