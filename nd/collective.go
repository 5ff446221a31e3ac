package nd

import "github.com/goluon/goluon/nd/backend"

// LibraryAllReduce sums bufs, one-dimensional arrays of one size and
// dtype on distinct contexts of one backend, in place with the backend's
// collective (backend.Collective): on CPU contexts, one pass over the
// buffers in host memory; on the cuda backend, one kernel over virtual
// GPUs of one card; both sum in the order given, bitwise as the copies'
// fixed-order sum; and NCCL between physical GPUs, whose sums are in its
// own order (equal within rounding, not bitwise). It reports false, having
// done nothing, when no collective applies to them — half-precision
// dtypes, dtypes the backend does not sum, NCCL missing or turned off
// (GOLUON_NCCL=0, GOLUON_VREDUCE=0) — and the caller then reduces with
// copies. It is not recorded. The work is queued on the devices; a failure to queue
// it is returned.
func LibraryAllReduce(bufs []*NDArray) (bool, error) {
	const op = "LibraryAllReduce"
	if len(bufs) == 0 {
		return false, nil
	}
	defer checkLive(op, bufs...).done()
	be := bufs[0].be()
	coll, ok := kernelsOf[backend.Collective](be)
	if !ok {
		return false, nil
	}
	args := make([]backend.Arg, len(bufs))
	for i, b := range bufs {
		if b.be() != be || b.dtype != bufs[0].dtype || b.dtype.IsHalf() || b.Size() != bufs[0].Size() {
			return false, nil
		}
		for _, o := range bufs[:i] {
			if o.st.dev == b.st.dev { // one buffer per context: the caller reports it
				return false, nil
			}
		}
		args[i] = b.arg()
	}
	return coll.AllReduceSum(args, bufs[0].Size())
}
