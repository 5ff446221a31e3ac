package data

import (
	"fmt"
	"slices"

	"github.com/goluon/goluon/nd"
)

// Collate says how the DataLoader joins one field of a batch's samples
// (Data, or one of Extra) into an array, as Gluon's batchify functions
// (Stack, Pad) and PyTorch's collate_fn with pad_sequence. The zero value
// stacks: every sample's array must have the same shape, and the batch's
// is [B, shape...]. With Pad, samples may differ in size along Axis (a
// sequence's length); each is padded with Value to the longest of its
// batch, and Batch.Lengths records the lengths before padding. Their other
// axes must agree.
type Collate struct {
	Pad   bool
	Axis  int     // the sample's axis to pad (negative counts from the end)
	Value float32 // the padding's value (−1 pads CTC targets, 0 sequences)
}

// collateInto joins the samples in hb.samples (of the dataset indices
// given) field by field into hb's buffers.
func (b *builder) collateInto(hb *hostBatch, indices []int) error {
	samples := hb.samples
	nf := 1 + len(samples[0].Extra)
	if len(b.collate) > nf {
		return &SampleError{Index: indices[0], Epoch: b.epoch, Err: &nd.Error{
			Op: "data.DataLoader", Kind: nd.ErrArgument,
			Msg: fmt.Sprintf("%d collate rules for samples of %d fields (Data and %d extra arrays)", len(b.collate), nf, nf-1),
		}}
	}
	hb.labels = grow(hb.labels, len(samples))
	for k, s := range samples {
		if len(s.Extra) != nf-1 {
			return b.fieldError(indices, k, 0, "has %d extra arrays but sample %d, first of its batch, has %d", len(s.Extra), indices[0], nf-1)
		}
		hb.labels[k] = s.Label
	}
	for len(hb.fields) < nf {
		hb.fields = append(hb.fields, hostField{})
	}
	hb.fields = hb.fields[:nf]
	for f := range nf {
		var c Collate
		if f < len(b.collate) {
			c = b.collate[f]
		}
		if err := b.collateField(&hb.fields[f], samples, indices, f, c); err != nil {
			return err
		}
	}
	return nil
}

// field returns field f of s: Data for 0, Extra[f-1] otherwise.
func field(s Sample, f int) Tensor {
	if f == 0 {
		return s.Data
	}
	return s.Extra[f-1]
}

// fieldError is the error of sample k's field f: "sample 3 has ..." for
// Data, "sample 3's extra array 0 has ..." for the others.
func (b *builder) fieldError(indices []int, k, f int, format string, args ...any) error {
	who := fmt.Sprintf("sample %d ", indices[k])
	if f > 0 {
		who = fmt.Sprintf("sample %d's extra array %d ", indices[k], f-1)
	}
	return &SampleError{Index: indices[k], Epoch: b.epoch, Err: &nd.Error{
		Op: "data.DataLoader", Kind: nd.ErrShape, Msg: who + fmt.Sprintf(format, args...),
	}}
}

// collateField stacks or pads field f of the samples into out.
func (b *builder) collateField(out *hostField, samples []Sample, indices []int, f int, c Collate) error {
	first := field(samples[0], f).Shape
	n := len(samples)
	axis := c.Axis
	if c.Pad {
		if axis < 0 {
			axis += len(first)
		}
		if axis < 0 || axis >= len(first) {
			return b.fieldError(indices, 0, f, "has shape %v: no axis %d to pad", first, c.Axis)
		}
	}
	// The batch's sample shape: the first's, with the longest length along
	// a padded axis.
	shape := append(out.shape[:0], n)
	shape = append(shape, first...)
	out.lengths = out.lengths[:0]
	for k, s := range samples {
		sh := field(s, f).Shape
		same := slices.Equal(sh, first)
		if c.Pad && len(sh) == len(first) {
			same = true
			for a := range sh {
				if a != axis && sh[a] != first[a] {
					same = false
				}
			}
		}
		if !same {
			if c.Pad {
				return b.fieldError(indices, k, f, "has shape %v but sample %d, first of its batch, has %v; padded along axis %d, the other axes must agree", sh, indices[0], first, axis)
			}
			return b.fieldError(indices, k, f, "has shape %v but sample %d, first of its batch, has %v; samples in a batch must share a shape (or set LoaderOpts.Collate to pad)", sh, indices[0], first)
		}
		if c.Pad {
			out.lengths = append(out.lengths, sh[axis])
			shape[1+axis] = max(shape[1+axis], sh[axis])
		}
	}
	if !c.Pad {
		out.lengths = nil
	}
	out.shape = shape
	size := 1
	for _, d := range shape[1:] {
		size *= d
	}
	out.data = grow(out.data, n*size)
	for k, s := range samples {
		t := field(s, f)
		dst := out.data[k*size : (k+1)*size]
		if !c.Pad || t.Shape[axis] == shape[1+axis] {
			copyValues(dst, t, 0, len(dst))
			continue
		}
		// Rows of the padded axis: outer blocks of inner·len values, each
		// followed by inner·(max−len) of padding.
		inner := 1
		for _, d := range t.Shape[axis+1:] {
			inner *= d
		}
		have, want := t.Shape[axis]*inner, shape[1+axis]*inner
		for o := 0; o*want < len(dst); o++ {
			copyValues(dst[o*want:o*want+have], t, o*have, have)
			for j := o*want + have; j < (o+1)*want; j++ {
				dst[j] = c.Value
			}
		}
	}
	return nil
}

// copyValues copies n values of t from offset off into dst as float32.
func copyValues(dst []float32, t Tensor, off, n int) {
	if t.F32 != nil {
		copy(dst, t.F32[off:off+n])
		return
	}
	for j, v := range t.U8[off : off+n] {
		dst[j] = float32(v)
	}
}
