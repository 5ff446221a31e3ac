package gluon_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// A learner trains while an HTTP handler serves predictions. The rule is
// one: make a Predictor and call it. The learner publishes a snapshot of
// its parameters every so often; handlers call the Predictor from any
// number of goroutines, each call in predict mode (no dropout) whatever
// the learner is doing, with no lock around Trainer.Step.
func Example_trainAndServe() {
	dev := ctx.CPU(0)
	nd.Seed(1)
	newNet := func() *nn.Sequential {
		return nn.NewSequential(
			nn.NewDense(8, nn.DenseOpts{Act: "tanh", InUnits: 2}),
			nn.NewDropout(0.1),
			nn.NewDense(1, nn.DenseOpts{InUnits: 8}),
		)
	}
	net := newNet()
	params := gluon.CollectParams(net)
	_ = params.Initialize(initializer.Uniform{Scale: 0.5}, []ctx.Context{dev}, false)
	trainer, _ := gluon.NewTrainer(params, optimizer.NewSGD(0.05), "local", gluon.TrainerOpts{})
	pred, _ := gluon.NewPredictor(newNet, gluon.PredictorOpts{})
	publish := func() { // a snapshot at a step boundary, copied by Publish
		snap := trainer.Snapshot()
		_ = pred.Publish(snap)
		snap.Release()
	}
	publish()

	predict := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in []float32
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || len(in) != 2 {
			http.Error(w, "want [x1, x2]", http.StatusBadRequest)
			return
		}
		y, _, err := pred.PredictData(in, 1, 2)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(y[0])
	})
	srv := httptest.NewServer(predict)
	defer srv.Close()
	ask := func(x1, x2 float32) (float32, error) {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(fmt.Sprintf("[%g, %g]", x1, x2)))
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		var y float32
		return y, json.NewDecoder(resp.Body).Decode(&y)
	}

	// Clients ask while the learner trains.
	done := make(chan struct{})
	var clients sync.WaitGroup
	var failed error
	clients.Add(1)
	go func() {
		defer clients.Done()
		for {
			select {
			case <-done:
				return
			default:
				if _, err := ask(0.5, -0.5); err != nil {
					failed = err
					return
				}
			}
		}
	}()

	// The learner: y = x1 − x2 on a fixed batch, with dropout in training.
	x := nd.FromSlice(dev, []float32{1, 0, 0, 1, 1, 1, 0.5, -0.5, -1, 0.5, 0.2, 0.8}, 6, 2)
	y := nd.FromSlice(dev, []float32{1, -1, 0, 1, -1.5, -0.6}, 6, 1)
	for i := range 1500 {
		scope := nd.NewScope()
		autograd.Record(func() {
			autograd.Backward(nd.Mean(nd.Square(nd.Sub(net.Forward(x), y))))
		})
		_ = trainer.Step(1)
		if (i+1)%100 == 0 {
			publish()
		}
		scope.Close()
	}
	close(done)
	clients.Wait()
	fmt.Println("requests during training failed:", failed)

	got, err := ask(0.5, -0.5)
	fmt.Printf("f(0.5, -0.5) = %.1f (want 1.0), err %v\n", got, err)
	// Output:
	// requests during training failed: <nil>
	// f(0.5, -0.5) = 1.0 (want 1.0), err <nil>
}
