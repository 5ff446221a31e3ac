package gluon

import (
	"testing"
	"time"

	"github.com/goluon/goluon/ctx"
)

// TestPoolGoroutinesLeave checks that idle pool goroutines leave after
// poolIdle, and that the pool starts afresh after they have.
func TestPoolGoroutinesLeave(t *testing.T) {
	defer poolIdleNS.Store(poolIdleNS.Swap(int64(20 * time.Millisecond)))
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1), ctx.CPU(2), ctx.CPU(3)}
	for round := range 2 {
		ran := make([]bool, len(devs))
		if err := ForEachDevice(devs, func(i int, _ ctx.Context) error {
			ran[i] = true
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for i, ok := range ran {
			if !ok {
				t.Fatalf("round %d: context %d did not run", round, i)
			}
		}
		if n := poolIdleN.Load(); n < 1 {
			t.Fatalf("round %d: %d idle pool goroutines after the call, want at least 1", round, n)
		}
		deadline := time.Now().Add(5 * time.Second)
		for poolIdleN.Load() > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d pool goroutines still idle after 5s (poolIdle %v)", round, poolIdleN.Load(), poolIdle())
			}
			time.Sleep(time.Millisecond)
		}
	}
}
