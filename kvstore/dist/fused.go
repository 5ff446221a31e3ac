package dist

import (
	"strings"

	"github.com/goluon/goluon/kvstore"
	"github.com/goluon/goluon/kvstore/mpi"
	"github.com/goluon/goluon/nd"
)

// ctrlLen is the length of a control message in int64s: the number of
// workers, the batch, and the eight bytes of the exchange's signature and
// their squares.
const ctrlLen = 2 + 16

// control runs one control exchange: every worker contributes 1, its batch
// and the signature of what it is about to exchange, all summed. The
// signatures agree exactly when, for each of their eight bytes b,
// n·Σb² = (Σb)² (Cauchy–Schwarz, with equality only for equal values).
// It returns the summed batch.
func (s *Store) control(op string, keys []string, shapes []keyShape, batch int) (int, error) {
	sig := signature(op, keys, shapes)
	x := s.ctrl.Int64s()[:ctrlLen]
	x[0], x[1] = 1, int64(batch)
	for k := range 8 {
		b := int64(sig >> (8 * k) & 0xff)
		x[2+k], x[10+k] = b, b*b
	}
	if err := s.comm.Allreduce(s.ctrl, mpi.Int64, ctrlLen, mpi.Sum); err != nil {
		return 0, s.errorf("%s of %d keys: %w", op, len(keys), err)
	}
	s.stats.Controls++
	n := x[0]
	if n != int64(s.comm.Size()) {
		return 0, s.errorf("control exchange counted %d workers, want %d", n, s.comm.Size())
	}
	for k := range 8 {
		if n*x[10+k] != x[2+k]*x[2+k] {
			return 0, s.errorf("workers disagree about %s %d: this worker has %d keys %s (signature %016x) and at least one other worker has a different list; "+
				"every worker must exchange the same parameters (names, shapes, dtypes) in the same order (was a parameter stale on one worker only, or is the network different?)",
				op, s.steps+1, len(keys), keyList(keys), sig)
		}
	}
	return int(x[1]), nil
}

func keyList(keys []string) string {
	if len(keys) <= 6 {
		return "[" + strings.Join(keys, " ") + "]"
	}
	return "[" + strings.Join(keys[:3], " ") + " … " + strings.Join(keys[len(keys)-2:], " ") + "]"
}

// fused moves the keys through fusion buffers: consecutive keys of one
// dtype are packed (each key's values summed over this process's devices
// first) into one buffer of at most FusionBytes, the buffer is allreduced
// (mode "allreduce") or broadcast from rank 0 (mode "bcast"), and unpack
// is called with each key's part of the result.
func (s *Store) fused(keys []string, values [][]*nd.NDArray, mode string, unpack func(i int, buf any)) error {
	for i := 0; i < len(keys); {
		dt := s.stored[keys[i]].DType()
		bytes, j := 0, i
		for j < len(keys) {
			v := s.stored[keys[j]]
			n := v.Size() * dt.Size()
			if v.DType() != dt || (j > i && bytes+n > s.opts.FusionBytes) {
				break
			}
			bytes += n
			j++
		}
		if err := s.exchange(keys[i:j], values[i:j], dt, bytes, mode); err != nil {
			return err
		}
		off := 0
		for k := i; k < j; k++ {
			n := s.stored[keys[k]].Size()
			unpack(k, s.view(dt, off, n))
			off += n
		}
		i = j
	}
	return nil
}

// exchange packs one fusion buffer and runs its collective.
func (s *Store) exchange(keys []string, values [][]*nd.NDArray, dt nd.DType, bytes int, mode string) error {
	if bytes == 0 {
		return nil
	}
	if s.fusion == nil || s.fusion.Len() < bytes {
		s.fusion.Free()
		b, err := mpi.Alloc(bytes)
		if err != nil {
			s.fusion = nil
			return s.errorf("fusion buffer: %w", err)
		}
		s.fusion = b
	}
	bcast := mode == "bcast"
	off := 0
	for k, key := range keys {
		n := s.stored[key].Size()
		if !bcast || s.comm.Rank() == 0 {
			view := s.view(dt, off, n)
			if vs := values[k]; len(vs) == 1 {
				vs[0].ReadInto(view)
			} else {
				dev := host
				if s.opts.SumOnDevice {
					dev = vs[0].Context()
				}
				sum := kvstore.SumOn(dev, vs)
				sum.ReadInto(view)
				sum.Release()
			}
		}
		off += n
	}
	mdt := mpi.Float32
	if dt == nd.Float64 {
		mdt = mpi.Float64
	}
	var err error
	if bcast {
		err = s.comm.Bcast(s.fusion, mdt, off, 0)
		s.stats.Broadcasts++
	} else {
		err = s.comm.Allreduce(s.fusion, mdt, off, mpi.Sum)
		s.stats.Allreduces++
	}
	if err != nil {
		return s.errorf("%s of %d keys %s (%d bytes): %w", mode, len(keys), keyList(keys), bytes, err)
	}
	s.stats.Bytes += int64(bytes)
	return nil
}

// view returns n elements of the fusion buffer from element off, as a
// []float32 or []float64.
func (s *Store) view(dt nd.DType, off, n int) any { return bufView(s.fusion, dt, off, n) }
