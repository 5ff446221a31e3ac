package mpi_test

import (
	"testing"

	"github.com/goluon/goluon/kvstore/mpi"
)

func TestBufferViews(t *testing.T) {
	b, err := mpi.Alloc(64)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if b.Len() != 64 || len(b.Float32s()) != 16 || len(b.Float64s()) != 8 || len(b.Int64s()) != 8 {
		t.Fatalf("views of a 64-byte buffer: %d bytes, %d/%d/%d elements", b.Len(), len(b.Float32s()), len(b.Float64s()), len(b.Int64s()))
	}
	for i, v := range b.Float64s() {
		if v != 0 {
			t.Fatalf("element %d of a new buffer is %v, want 0", i, v)
		}
	}
	b.Float64s()[3] = 2.5
	if got := b.Float64s()[3]; got != 2.5 {
		t.Errorf("read back %v, want 2.5", got)
	}
	b.Free()
	b.Free() // a second Free does nothing
	if b.Len() != 0 {
		t.Errorf("freed buffer reports %d bytes", b.Len())
	}
}

func TestAllocRejectsEmpty(t *testing.T) {
	for _, n := range []int{0, -8} {
		if _, err := mpi.Alloc(n); err == nil {
			t.Errorf("Alloc(%d) succeeded", n)
		}
	}
}

func TestNames(t *testing.T) {
	tests := []struct{ got, want string }{
		{mpi.Float32.String(), "float32"},
		{mpi.Int64.String(), "int64"},
		{mpi.Sum.String(), "sum"},
		{mpi.Min.String(), "min"},
		{mpi.ThreadFunneled.String(), "MPI_THREAD_FUNNELED"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
