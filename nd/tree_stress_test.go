package nd_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goluon/goluon/nd"
)

// TestTreeFastPathStress: a learner tree (Record, train) with nd.Go
// members checks its state in a loop while other trees (PredictMode,
// Pause, TrainMode, autocast) open and close around it, and plain
// goroutines check the default state.
func TestTreeFastPathStress(t *testing.T) {
	needGID(t)
	var stop atomic.Bool
	var bad atomic.Int64
	var msg atomic.Value
	report := func(s string) {
		if bad.Add(1) == 1 {
			msg.Store(s)
		}
	}
	var wg sync.WaitGroup
	dur := 1500 * time.Millisecond
	// learner: alternately in Record(train) and out of any scope
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			exit := nd.EnterRecording(true)
			var mw sync.WaitGroup
			for range 2 {
				mw.Add(1)
				nd.Go(func() {
					defer mw.Done()
					for range 2000 {
						if !nd.IsRecording() || !nd.IsTraining() {
							report(fmt.Sprintf("learner member: rec=%v train=%v", nd.IsRecording(), nd.IsTraining()))
						}
						if _, on := nd.DefaultSession().AutocastDType(); on {
							report("learner member autocasts")
						}
					}
				})
			}
			for range 2000 {
				if !nd.IsRecording() || !nd.IsTraining() {
					report(fmt.Sprintf("learner owner: rec=%v train=%v", nd.IsRecording(), nd.IsTraining()))
				}
			}
			mw.Wait()
			exit()
			for range 200 {
				if nd.IsRecording() || nd.IsTraining() {
					report("learner outside its tree sees state")
				}
			}
		}
	}()
	// churners: trees opening and closing quickly
	for k := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				switch k {
				case 0:
					e := nd.EnterMode(false)
					if nd.IsTraining() || nd.IsRecording() {
						report("server sees training/recording")
					}
					e()
				case 1:
					e := nd.EnterAutocast(nd.Float16)
					if _, on := nd.DefaultSession().AutocastDType(); !on {
						report("autocaster does not autocast")
					}
					if nd.IsRecording() || nd.IsTraining() {
						report("autocaster sees rec/train")
					}
					e()
				case 2:
					e := nd.EnterPause(true)
					if !nd.IsTraining() || nd.IsRecording() {
						report("pauser wrong")
					}
					e()
				}
				if nd.IsRecording() || nd.IsTraining() {
					report(fmt.Sprintf("churner %d outside its scopes sees state", k))
				}
			}
		}()
	}
	// plain goroutine
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if nd.IsRecording() || nd.IsTraining() {
				report("plain goroutine sees state")
			}
			if _, on := nd.DefaultSession().AutocastDType(); on {
				report("plain goroutine autocasts")
			}
		}
	}()
	time.Sleep(dur)
	stop.Store(true)
	wg.Wait()
	if n := bad.Load(); n > 0 {
		t.Fatalf("%d bad reads; first: %v", n, msg.Load())
	}
}
