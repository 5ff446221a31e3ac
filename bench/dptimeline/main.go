// Command dptimeline times the phases of a data-parallel training step on
// CPU contexts: SplitAndLoad, each context's forward and backward pass,
// the wait for the other contexts at the end of ForEachDevice, the
// Trainer's Step and the closing of the step's scope. It prints the median
// and the 90th percentile of each phase in µs.
//
//	go build -o /tmp/dptimeline ./bench/dptimeline
//	/tmp/dptimeline -model lenet -contexts 2
//	/tmp/dptimeline -model lenet -contexts 1
//	taskset -c 0 /tmp/dptimeline -model lenet -contexts 1 -batch 64
//
// The last line is one context's share of the batch on one core alone:
// what each context of a 2-context step would take if running two of them
// side by side cost nothing. GOLUON_PIN=1 or 0 fixes ForEachDevice's
// pinning choice (gluon.ForEachDevice).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

func main() {
	cfg := config{}
	flag.StringVar(&cfg.model, "model", "lenet", "lenet (SGD) or cifar (the Keras CIFAR-10 CNN, RMSprop)")
	flag.IntVar(&cfg.contexts, "contexts", 2, "CPU contexts cpu(0)..cpu(n-1)")
	flag.IntVar(&cfg.batch, "batch", 128, "batch size, split over the contexts")
	flag.IntVar(&cfg.steps, "steps", 2000, "timed steps (a tenth more run first, untimed)")
	flag.Parse()
	if err := run(os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "dptimeline:", err)
		os.Exit(1)
	}
}

// config is the command line.
type config struct {
	model           string
	contexts, batch int
	steps           int
}

// phases are the timed parts of a step, in order.
var phases = []string{"split", "forward", "backward", "join", "step", "close", "total"}

// run times cfg.steps steps and prints one line per phase: its median and
// 90th percentile (forward and backward per context).
func run(w io.Writer, cfg config) error {
	if cfg.contexts < 1 || cfg.batch < cfg.contexts || cfg.steps < 1 {
		return fmt.Errorf("need contexts ≥ 1, batch ≥ contexts and steps ≥ 1")
	}
	devs := make([]ctx.Context, cfg.contexts)
	for i := range devs {
		devs[i] = ctx.CPU(i)
	}
	nd.Seed(1)
	var net gluon.Block
	var opt optimizer.Optimizer
	var shape []int
	switch cfg.model {
	case "lenet":
		net, opt, shape = modelzoo.LeNet(), optimizer.NewSGD(0.04), []int{cfg.batch, 1, 28, 28}
	case "cifar":
		net, opt, shape = modelzoo.KerasCIFARCNN(), optimizer.NewRMSProp(1e-4), []int{cfg.batch, 3, 32, 32}
	default:
		return fmt.Errorf("unknown model %q (lenet or cifar)", cfg.model)
	}
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
		return err
	}
	tr, err := gluon.NewTrainer(params, opt, "device", gluon.TrainerOpts{})
	if err != nil {
		return err
	}
	labels := make([]float32, cfg.batch)
	for i := range labels {
		labels[i] = float32(i % 10)
	}
	x := nd.RandomUniform(ctx.CPU(0), nd.Float32, 0, 1, shape...)
	y := nd.FromSlice(ctx.CPU(0), labels)
	lossFn := loss.NewSoftmaxCrossEntropy().Forward

	n := cfg.contexts
	times := map[string][][]float64{}
	for _, p := range phases {
		times[p] = make([][]float64, n)
	}
	add := func(p string, d int, from, to time.Time) {
		times[p][d] = append(times[p][d], float64(to.Sub(from).Nanoseconds())/1e3)
	}
	fwdEnd := make([]time.Time, n)
	bwdEnd := make([]time.Time, n)
	warm := max(cfg.steps/10, 3)
	for it := range warm + cfg.steps {
		s := nd.NewScope()
		t0 := time.Now()
		xs, err := gluon.SplitAndLoad(x, devs, false)
		if err != nil {
			return err
		}
		ys, err := gluon.SplitAndLoad(y, devs, false)
		if err != nil {
			return err
		}
		t1 := time.Now()
		autograd.Record(func() {
			err = gluon.ForEachDevice(devs, func(i int, _ ctx.Context) error {
				l := lossFn(net.Forward(xs[i]), ys[i])
				fwdEnd[i] = time.Now()
				autograd.Backward(l)
				bwdEnd[i] = time.Now()
				return nil
			})
		})
		if err != nil {
			return err
		}
		t2 := time.Now()
		if err := tr.Step(cfg.batch); err != nil {
			return err
		}
		t3 := time.Now()
		s.Close()
		t4 := time.Now()
		if it < warm {
			continue
		}
		add("split", 0, t0, t1)
		for d := range n {
			add("forward", d, t1, fwdEnd[d])
			add("backward", d, fwdEnd[d], bwdEnd[d])
		}
		add("join", 0, bwdEnd[0], t2)
		add("step", 0, t2, t3)
		add("close", 0, t3, t4)
		add("total", 0, t0, t4)
	}
	fmt.Fprintf(w, "%s, batch %d on %d context(s), %d steps: median [p90] µs\n", cfg.model, cfg.batch, n, cfg.steps)
	for _, p := range phases {
		for d, v := range times[p] {
			if len(v) == 0 {
				continue
			}
			name := p
			if p == "forward" || p == "backward" {
				name = fmt.Sprintf("%s %d", p, d)
			}
			fmt.Fprintf(w, "%-11s %9.1f [%9.1f]\n", name, quantile(v, 0.5), quantile(v, 0.9))
		}
	}
	return nil
}

// quantile returns the q-quantile of v (nearest rank).
func quantile(v []float64, q float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(int(q*float64(len(s))), len(s)-1)]
}
