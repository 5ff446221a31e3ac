//go:build !mpi

package mpi

import (
	"time"
	"unsafe"
)

// commImpl has no state without MPI: Init never returns a Comm.
type commImpl struct{}

func initWorld() (*Comm, error) { return nil, ErrNotBuilt }

func (commImpl) start(kind, *Buffer, DType, int, int, time.Duration, bool) (reqHandle, error) {
	return nil, ErrNotBuilt
}
func (commImpl) wait(reqHandle, time.Duration, time.Duration, time.Duration, time.Duration) (time.Duration, bool, error) {
	return 0, true, ErrNotBuilt
}
func (commImpl) finalize(time.Duration) error { return ErrNotBuilt }
func (commImpl) abort(int) error              { return ErrNotBuilt }

func allocMem(b *Buffer) error {
	b.keep = make([]uint64, (b.n+7)/8)
	b.p = unsafe.Pointer(&b.keep[0])
	return nil
}

func freeMem(*Buffer) {}

// reqHandle stands for a started collective; there are none without MPI.
type reqHandle = *struct{}
