package nn

import (
	"slices"
	"sync"
	"time"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/kvstore/mpi"
	"github.com/goluon/goluon/nd"
)

// SyncTimeout is how long a SyncBatchNorm context waits for the others to
// reach the same statistics exchange before it fails.
var SyncTimeout = time.Minute

// SyncBatchNorm is BatchNorm whose training-mode statistics are those of
// the whole batch over every context of its parameters (Gluon's
// contrib.nn.SyncBatchNorm, PyTorch's nn.SyncBatchNorm): each context's
// per-channel sums are added over the contexts, in a fixed order, before
// normalising, and so are the sums of the backward pass, so N contexts
// normalise, differentiate and update the running statistics as one
// context would on the concatenated batch. Small per-context batches keep
// the statistics of the whole batch.
//
// Every context must run the layer in each training step, each in a
// goroutine of its own (gluon.ForEachDevice does this), and in the same
// order as the others; a context that does not (fewer samples than
// contexts) makes the others fail after SyncTimeout, and the layer then
// fails at once until Reset. Predict mode and
// UseGlobalStats use the running statistics and exchange nothing. The
// parameters have BatchNorm's names, so the two load each other's files.
//
// In a program that runs as an MPI job of several processes (a dist_sync
// kvstore initialised MPI), the sums are also added over the processes,
// as PyTorch's default process group does: the statistics are those of the
// global batch. Each process's sum over its contexts is added in float64
// and allreduced; every process must run the layer in the same order.
// ProcessLocal keeps the exchange within each process.
type SyncBatchNorm struct {
	*BatchNorm
	// ProcessLocal exchanges the statistics between this process's
	// contexts only, also in an MPI job.
	ProcessLocal bool

	mu     sync.Mutex
	rounds map[int]*syncRound  // exchanges under way, by number
	calls  map[ctx.Context]int // exchanges each context has joined
	broken error               // set by a timed-out exchange: the contexts are out of step
	fail   chan struct{}       // closed when broken is set, to wake the other waiters
}

// Reset forgets the exchanges under way and a timeout's failure, so that
// the layer can be used again once every context is back in step (after a
// step that failed).
func (b *SyncBatchNorm) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.rounds {
		for _, v := range r.vals {
			v.Release()
		}
	}
	b.rounds, b.calls, b.broken, b.fail = map[int]*syncRound{}, map[ctx.Context]int{}, nil, make(chan struct{})
}

// NewSyncBatchNorm returns a synchronised batch-normalisation layer.
func NewSyncBatchNorm(o BatchNormOpts) *SyncBatchNorm {
	return &SyncBatchNorm{BatchNorm: NewBatchNorm(o), rounds: map[int]*syncRound{}, calls: map[ctx.Context]int{}, fail: make(chan struct{})}
}

// Forward normalises x with the statistics of every context's batch.
// ForwardRelu is Relu(Forward(x)): the statistics are exchanged as in
// Forward (the embedded BatchNorm's ForwardRelu would normalise each
// context alone).
func (b *SyncBatchNorm) ForwardRelu(x *nd.NDArray) *nd.NDArray { return nd.Relu(b.Forward(x)) }

func (b *SyncBatchNorm) Forward(x *nd.NDArray) *nd.NDArray {
	if !x.Session().IsTraining() || b.opts.UseGlobalStats {
		return b.BatchNorm.Forward(x)
	}
	if dt := x.DType(); dt.IsHalf() { // statistics in float32, as nd.BatchNorm keeps them
		return b.Forward(x.AsType(nd.Float32)).AsType(dt)
	}
	shape := x.Shape()
	ax := b.channelAxis("nn.SyncBatchNorm", shape)
	c := shape[ax]
	dev := x.Context()
	b.RunningMean.InferShape(c)
	b.RunningVar.InferShape(c)
	runMean, runVar := b.RunningMean.Data(dev), b.RunningVar.Data(dev)

	var axes []int
	bshape := make([]int, len(shape)) // the per-channel arrays' broadcast shape
	for i := range shape {
		bshape[i] = 1
		if i != ax {
			axes = append(axes, i)
		}
	}
	bshape[ax] = c
	sums := nd.Concat([]*nd.NDArray{nd.Sum(x, axes...), nd.Sum(nd.Square(x), axes...)}, 0)
	total, count := b.allSum(sums, x.Size()/max(c, 1))
	n := float64(count)
	mean := nd.DivScalar(nd.SliceAxis(total, 0, c, 0), n)
	// E[x²] − mean², clamped at 0 against rounding.
	variance := nd.MaximumScalar(nd.Sub(nd.DivScalar(nd.SliceAxis(total, c, 2*c, 0), n), nd.Square(mean)), 0)
	y := nd.Mul(nd.Sub(x, nd.Reshape(mean, bshape...)), nd.Reshape(nd.Rsqrt(nd.AddScalar(variance, b.epsilon)), bshape...))
	if b.Gamma != nil {
		b.Gamma.InferShape(c)
		y = nd.Mul(y, nd.Reshape(b.Gamma.DataFor(x), bshape...))
	}
	if b.Beta != nil {
		b.Beta.InferShape(c)
		y = nd.Add(y, nd.Reshape(b.Beta.DataFor(x), bshape...))
	}
	unbiased := n / max(n-1, 1)
	updateRunning(runMean, mean.Detach(), b.momentum, 1)
	updateRunning(runVar, variance.Detach(), b.momentum, unbiased)
	return y
}

// updateRunning sets run = momentum·run + (1−momentum)·scale·batch, as
// nd.BatchNorm updates its running statistics.
func updateRunning(run, batch *nd.NDArray, momentum, scale float64) {
	b := nd.MulScalar(batch, (1-momentum)*scale)
	nd.ScaleInPlace(run, momentum)
	nd.AddTo(run, b)
	b.Release()
}

// syncRound is one exchange: each context's array, and how many arrived.
type syncRound struct {
	vals   []*nd.NDArray // persistent copies, released by the last reader
	counts []int
	global []float64 // the sum over the processes (MPI job), else nil
	total  int       // its count
	err    error     // the exchange over the processes failed
	left   int       // contexts yet to join
	unread int       // contexts yet to read the others' values
	done   chan struct{}
}

// allSum returns, on v's context, the sum of every context's v, added in
// the order of the layer's contexts, and the sum of the counts; its
// gradient is, likewise, the sum of every context's gradient.
func (b *SyncBatchNorm) allSum(v *nd.NDArray, count int) (*nd.NDArray, int) {
	dev := v.Context()
	sum, total := b.exchange(dev, v.Detach(), count)
	nd.Record("SyncBatchNorm", sum, []*nd.NDArray{v}, func(g *nd.NDArray, _ []bool) []*nd.NDArray {
		gs, _ := b.exchange(dev, g, 0)
		return []*nd.NDArray{gs}
	})
	return sum, total
}

// EagerOnly says why SyncBatchNorm cannot be traced (gluon.Hybridize runs
// a network holding one eagerly).
func (b *SyncBatchNorm) EagerOnly() string {
	return "SyncBatchNorm meets the other contexts and processes while it runs, which a replay cannot repeat"
}

// exchange joins dev's next round with v and returns, once every context
// has joined, the sum of their arrays on dev and of their counts.
func (b *SyncBatchNorm) exchange(dev ctx.Context, v *nd.NDArray, count int) (*nd.NDArray, int) {
	if nd.Tracing() { // before joining a round: a trace cannot meet the other contexts
		nd.Panicf("nn.SyncBatchNorm", nd.ErrTrace, "%s: %s", b.Meta().Name(), b.EagerOnly())
	}
	devs := b.RunningMean.Contexts()
	me := slices.Index(devs, dev)
	if me < 0 {
		nd.Panicf("nn.SyncBatchNorm", nd.ErrContext, "input on %v, parameters on %v", dev, devs)
	}
	b.mu.Lock()
	if b.broken != nil {
		err := b.broken
		b.mu.Unlock()
		panic(err)
	}
	fail := b.fail
	k := b.calls[dev]
	b.calls[dev] = k + 1
	r := b.rounds[k]
	if r == nil {
		r = &syncRound{vals: make([]*nd.NDArray, len(devs)), counts: make([]int, len(devs)), left: len(devs), unread: len(devs), done: make(chan struct{})}
		b.rounds[k] = r
	}
	// A copy of its own: the caller's array (a gradient, a temporary) may be
	// released before every context has read it.
	r.vals[me], r.counts[me] = nd.PersistentSession().CopyOf(v, dev), count
	r.left--
	last := r.left == 0
	if last {
		delete(b.rounds, k)
	}
	b.mu.Unlock()
	defer b.doneReading(r)
	if last {
		if comm := b.world(); comm != nil {
			// The last context to join adds this process's sums and
			// allreduces them before the others read the round.
			r.err = nd.Catch(func() { r.global, r.total = processSum(comm, r.vals, r.counts) })
			if r.err != nil {
				b.breakWith(r.err)
			}
		}
		close(r.done)
	}
	timeout := time.After(SyncTimeout)
	for waiting := true; waiting; {
		select {
		case <-r.done:
			waiting = false
		case <-fail: // another context timed out: the contexts are out of step
			b.mu.Lock()
			err := b.broken
			b.mu.Unlock()
			panic(err)
		case <-timeout:
			b.mu.Lock()
			joined := r.left == 0
			b.mu.Unlock()
			if joined {
				// Every context of this process is in: the last one is
				// exchanging with the other processes, under MPI's deadline.
				timeout = nil
				continue
			}
			err := nd.Catch(func() {
				nd.Panicf("nn.SyncBatchNorm", nd.ErrArgument, "%v waited %v for %d of the %d contexts %v: every context must run the layer in each training step, each in its own goroutine (gluon.ForEachDevice), with at least one sample; the layer fails from now on until Reset", dev, SyncTimeout, r.left, len(devs), devs)
			})
			panic(b.breakWith(err))
		}
	}
	if r.err != nil {
		panic(r.err)
	}
	return b.localSum(dev, r)
}

// breakWith marks the layer failed (the first error stays) and wakes every
// waiting context; it returns the layer's error.
func (b *SyncBatchNorm) breakWith(err error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.broken == nil {
		b.broken = err
		close(b.fail)
	}
	return b.broken
}

// doneReading counts a context out of round r; the last one releases the
// round's copies.
func (b *SyncBatchNorm) doneReading(r *syncRound) {
	b.mu.Lock()
	r.unread--
	last := r.unread == 0
	b.mu.Unlock()
	if last {
		for _, x := range r.vals {
			x.Release()
		}
	}
}

// localSum returns, on dev, the round's sum: the one over the processes
// when there is one, else the sum of the contexts' arrays in context order.
func (b *SyncBatchNorm) localSum(dev ctx.Context, r *syncRound) (*nd.NDArray, int) {
	if r.global != nil {
		v := r.vals[0]
		g := nd.FromSlice(dev, r.global, v.Shape()...)
		if v.DType() == nd.Float64 {
			return g.Detach(), r.total
		}
		defer g.Release()
		return g.AsType(v.DType()).Detach(), r.total
	}
	var acc *nd.NDArray
	total := 0
	for i, x := range r.vals {
		total += r.counts[i]
		if x.Context() != dev {
			x = x.DetachedCopyTo(dev)
		}
		if acc == nil {
			acc = x.Copy().Detach()
			continue
		}
		acc = nd.Add(acc, x)
	}
	return acc, total
}

// world returns the MPI job's communicator when the layer exchanges over
// processes: MPI initialised (by a dist_sync kvstore) with several
// processes, and not ProcessLocal.
func (b *SyncBatchNorm) world() *mpi.Comm {
	if b.ProcessLocal {
		return nil
	}
	if c := mpi.World(); c != nil && c.Size() > 1 {
		return c
	}
	return nil
}

// processSum adds the contexts' arrays in order, in float64 on the host,
// with the counts, and allreduces the result over the processes.
func processSum(comm *mpi.Comm, vals []*nd.NDArray, counts []int) ([]float64, int) {
	n := vals[0].Size()
	buf, err := mpi.Alloc(8 * (n + 1))
	if err != nil {
		nd.Panicf("nn.SyncBatchNorm", nd.ErrDevice, "%v", err)
	}
	defer buf.Free()
	x := buf.Float64s()[:n+1]
	for i, v := range vals {
		for j, f := range v.Float64s() {
			x[j] += f
		}
		x[n] += float64(counts[i])
	}
	if err := comm.Allreduce(buf, mpi.Float64, n+1, mpi.Sum); err != nil {
		nd.Panicf("nn.SyncBatchNorm", nd.ErrDevice, "exchanging the statistics over the processes: %v", err)
	}
	return slices.Clone(x[:n]), int(x[n])
}
