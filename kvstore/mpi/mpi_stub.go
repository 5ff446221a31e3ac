//go:build !mpi

package mpi

import "unsafe"

// commImpl has no state without MPI: Init never returns a Comm.
type commImpl struct{}

func initWorld() (*Comm, error) { return nil, ErrNotBuilt }

func (commImpl) allreduce(*Buffer, DType, int, Op) error { return ErrNotBuilt }
func (commImpl) bcast(*Buffer, DType, int, int) error    { return ErrNotBuilt }
func (commImpl) iallreduce(*Buffer, DType, int, Op) (reqHandle, error) {
	return nil, ErrNotBuilt
}
func (commImpl) barrier() error  { return ErrNotBuilt }
func (commImpl) finalize() error { return ErrNotBuilt }
func (commImpl) abort(int) error { return ErrNotBuilt }

func allocMem(b *Buffer) error {
	b.keep = make([]uint64, (b.n+7)/8)
	b.p = unsafe.Pointer(&b.keep[0])
	return nil
}

func freeMem(*Buffer) {}

// reqHandle stands for a started collective; there are none without MPI.
type reqHandle = *struct{}
