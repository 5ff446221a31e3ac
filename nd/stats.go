package nd

import (
	"sync"
	"sync/atomic"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

// DeviceStats counts what a context exchanged with other contexts and how
// often the host waited on it, since the process started or the last
// ResetCounters. Data-parallel training reads it to check that a step
// copies no more than its reduction needs and keeps the host from waiting.
type DeviceStats struct {
	CopiesIn, CopiesOut int64 // copies between this context and another, by direction
	BytesIn, BytesOut   int64 // their sizes
	// HostSyncs counts the host's waits for the device's queued work
	// (reading an array's values, Sync); WorkerCalls the round trips to the
	// thread that issues the device's work. Both are 0 on the CPU, whose
	// ops complete before they return.
	HostSyncs, WorkerCalls int64
}

// Sub returns s minus earlier, field by field: the counts of an interval.
func (s DeviceStats) Sub(earlier DeviceStats) DeviceStats {
	return DeviceStats{
		CopiesIn: s.CopiesIn - earlier.CopiesIn, CopiesOut: s.CopiesOut - earlier.CopiesOut,
		BytesIn: s.BytesIn - earlier.BytesIn, BytesOut: s.BytesOut - earlier.BytesOut,
		HostSyncs: s.HostSyncs - earlier.HostSyncs, WorkerCalls: s.WorkerCalls - earlier.WorkerCalls,
	}
}

type copyCounters struct {
	copiesIn, copiesOut, bytesIn, bytesOut atomic.Int64
	syncBase                               backend.SyncStats // the backend's counts at the last reset
}

var (
	statsMu sync.Mutex
	stats   = map[ctx.Context]*copyCounters{}
)

func countersOf(dev ctx.Context) *copyCounters {
	statsMu.Lock()
	defer statsMu.Unlock()
	c := stats[dev]
	if c == nil {
		c = &copyCounters{}
		stats[dev] = c
	}
	return c
}

// countCopy records a copy of n bytes from src to dst.
func countCopy(dst, src ctx.Context, n int64) {
	d, s := countersOf(dst), countersOf(src)
	d.copiesIn.Add(1)
	d.bytesIn.Add(n)
	s.copiesOut.Add(1)
	s.bytesOut.Add(n)
}

// syncStats is the backend's count of host waits on dev (zero for a
// synchronous backend).
func syncStats(dev ctx.Context) backend.SyncStats {
	if be := backend.For(dev); be != nil {
		if sc, ok := be.(backend.SyncCounter); ok {
			return sc.SyncStats(dev)
		}
	}
	return backend.SyncStats{}
}

// Counters returns dev's counters (see DeviceStats).
func Counters(dev ctx.Context) DeviceStats {
	c := countersOf(dev)
	now := syncStats(dev)
	statsMu.Lock()
	base := c.syncBase
	statsMu.Unlock()
	return DeviceStats{
		CopiesIn: c.copiesIn.Load(), CopiesOut: c.copiesOut.Load(),
		BytesIn: c.bytesIn.Load(), BytesOut: c.bytesOut.Load(),
		HostSyncs: now.HostSyncs - base.HostSyncs, WorkerCalls: now.WorkerCalls - base.WorkerCalls,
	}
}

// ResetCounters sets dev's counters to zero.
func ResetCounters(dev ctx.Context) {
	c := countersOf(dev)
	now := syncStats(dev)
	statsMu.Lock()
	c.syncBase = now
	statsMu.Unlock()
	c.copiesIn.Store(0)
	c.copiesOut.Store(0)
	c.bytesIn.Store(0)
	c.bytesOut.Store(0)
}
