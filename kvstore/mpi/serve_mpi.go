//go:build mpi

package mpi

import (
	"os"
	"time"
)

// serve runs on the MPI goroutine: it executes the calls handed to it
// and, while non-blocking collectives are in flight, drives their
// progress with MPI_Test. OpenMPI progresses a collective only inside MPI
// calls, so the goroutine keeps testing, in one C loop (goluon_progress)
// that needs no Go scheduling until it returns: when every collective is
// done, when a call waits for the goroutine (wake), or when a Wait is
// blocked and some collective completed. While a Wait is blocked the loop
// tests without pause; otherwise the collectives overlap with computing,
// and after spin without a completion it sleeps poll between tests,
// leaving the core to the compute threads.
func (c *Comm) serve() {
	spin, poll := pollSettings()
	for {
		if len(c.inflight) == 0 {
			f, ok := <-c.calls
			if !ok {
				return
			}
			c.unwake()
			f()
			continue
		}
		select {
		case f, ok := <-c.calls:
			if !ok {
				return
			}
			c.unwake()
			f()
			continue
		default:
		}
		fin, errs := c.impl.progress(c.inflight, c.flags, spin, poll)
		keep := c.inflight[:0]
		for i, p := range c.inflight {
			if fin[i] {
				p.r.at = time.Now()
				p.r.done <- errs[i]
				continue
			}
			keep = append(keep, p)
		}
		clear(c.inflight[len(keep):])
		c.inflight = keep
	}
}

// pollSettings returns how long the MPI goroutine tests a non-blocking
// collective without pausing, and the pause after that: GOLUON_MPI_SPIN
// and GOLUON_MPI_POLL (Go durations), default 50µs and 20µs.
func pollSettings() (spin, poll time.Duration) {
	spin, poll = 50*time.Microsecond, 20*time.Microsecond
	if d, err := time.ParseDuration(os.Getenv("GOLUON_MPI_SPIN")); err == nil && d >= 0 {
		spin = d
	}
	if d, err := time.ParseDuration(os.Getenv("GOLUON_MPI_POLL")); err == nil && d >= 0 {
		poll = d
	}
	return spin, poll
}
