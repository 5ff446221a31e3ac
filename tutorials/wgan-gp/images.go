package main

import (
	"fmt"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/tutorials/internal/common"
)

// saveSamples writes samples.png: the generator's images (predict mode,
// running statistics) for the 64 latents z, 8×8.
func saveSamples(gen *nn.Sequential, z *nd.NDArray, path func(string) (string, error)) error {
	var v []float64
	err := nd.Catch(func() {
		sc := nd.NewScope()
		defer sc.Close()
		autograd.PredictMode(func() {
			v = nd.MulScalar(nd.AddScalar(gen.Forward(z), 1), 0.5).Float64s() // [−1, 1] to [0, 1]
		})
	})
	if err != nil {
		return fmt.Errorf("samples: %w", err)
	}
	p, err := path("samples.png")
	if err != nil {
		return err
	}
	return common.WriteGrid(p, v, 8, 8, 28)
}

// savePlot draws the critic's Wasserstein estimate and the penalty per
// epoch.
func savePlot(path string, hist []epochStats) error {
	var w, pen []float64
	for _, e := range hist {
		w, pen = append(w, e.Wasserstein), append(pen, e.Penalty)
	}
	return common.EpochPlot(path, "WGAN-GP on Fashion-MNIST", "per image",
		common.Series{Label: "Wasserstein estimate", Values: w}, common.Series{Label: "gradient penalty", Values: pen})
}
