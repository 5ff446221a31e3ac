package nd

import "github.com/goluon/goluon/nd/backend"

// LibraryAllReduce sums bufs, one-dimensional arrays of one size and
// dtype on distinct contexts of one backend, in place with the backend's
// collective library (NCCL between physical GPUs; backend.Collective). It
// reports false, having done nothing, when no library applies to them —
// the CPU, virtual GPUs on one card, no library found or turned off (the
// cuda backend's GOLUON_NCCL=0) —
// and the caller then reduces with copies. The library's sums are in its
// own order: equal to a fixed-order sum within rounding, not bitwise. It
// is not recorded. The work is queued on the devices; a failure to queue
// it is returned.
func LibraryAllReduce(bufs []*NDArray) (bool, error) {
	const op = "LibraryAllReduce"
	if len(bufs) == 0 {
		return false, nil
	}
	checkLive(op, bufs...)
	be := bufs[0].be()
	coll, ok := be.(backend.Collective)
	if !ok {
		return false, nil
	}
	args := make([]backend.Arg, len(bufs))
	for i, b := range bufs {
		if b.be() != be || b.dtype != bufs[0].dtype || b.Size() != bufs[0].Size() {
			return false, nil
		}
		args[i] = b.arg()
	}
	return coll.AllReduceSum(args, bufs[0].Size())
}
