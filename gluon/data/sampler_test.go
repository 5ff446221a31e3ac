package data

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/goluon/goluon/nd"
)

func TestSequentialSampler(t *testing.T) {
	s := SequentialSampler{N: 5}
	if got := s.Order(3); !reflect.DeepEqual(got, []int{0, 1, 2, 3, 4}) || s.Len() != 5 {
		t.Fatalf("Order = %v, Len = %d", got, s.Len())
	}
}

func TestRandomSamplerDeterminism(t *testing.T) {
	const n = 50
	a, b := RandomSampler{N: n, Seed: 1}, RandomSampler{N: n, Seed: 1}
	for epoch := range 4 {
		oa, ob := a.Order(epoch), b.Order(epoch)
		if !reflect.DeepEqual(oa, ob) {
			t.Fatalf("epoch %d: same seed, different orders", epoch)
		}
		sorted := slices.Sorted(slices.Values(oa))
		if !reflect.DeepEqual(sorted, SequentialSampler{N: n}.Order(0)) {
			t.Fatalf("epoch %d: not a permutation: %v", epoch, oa)
		}
	}
	if reflect.DeepEqual(a.Order(0), a.Order(1)) {
		t.Fatal("epochs 0 and 1 have the same order")
	}
	if reflect.DeepEqual(a.Order(0), RandomSampler{N: n, Seed: 2}.Order(0)) {
		t.Fatal("seeds 1 and 2 give the same order")
	}
}

func TestLastBatchPolicies(t *testing.T) {
	cases := []struct {
		n, size int
		last    LastBatch
		want    [][]int
	}{
		{7, 3, Keep, [][]int{{0, 1, 2}, {3, 4, 5}, {6}}},
		{7, 3, Discard, [][]int{{0, 1, 2}, {3, 4, 5}}},
		{7, 3, Rollover, [][]int{{0, 1, 2}, {3, 4, 5}}},
		{6, 3, Keep, [][]int{{0, 1, 2}, {3, 4, 5}}},
		{2, 3, Keep, [][]int{{0, 1}}},
		{2, 3, Discard, [][]int{}},
		{2, 3, Rollover, [][]int{}},
		{0, 3, Keep, [][]int{}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("n=%d/size=%d/%v", c.n, c.size, c.last), func(t *testing.T) {
			bs, err := NewBatchSampler(SequentialSampler{N: c.n}, c.size, c.last)
			if err != nil {
				t.Fatal(err)
			}
			got := bs.Batches(0)
			if !reflect.DeepEqual(got, c.want) || bs.Len(0) != len(c.want) {
				t.Fatalf("Batches(0) = %v (Len %d), want %v", got, bs.Len(0), c.want)
			}
		})
	}
}

// gluonRollover is Gluon's stateful BatchSampler with last_batch='rollover',
// run over consecutive epochs.
func gluonRollover(s Sampler, size, epochs int) [][][]int {
	var prev []int
	out := make([][][]int, epochs)
	for e := range epochs {
		batch := prev
		prev = nil
		out[e] = [][]int{}
		for _, i := range s.Order(e) {
			batch = append(batch, i)
			if len(batch) == size {
				out[e] = append(out[e], batch)
				batch = nil
			}
		}
		prev = batch
	}
	return out
}

func TestRolloverAcrossEpochs(t *testing.T) {
	for _, c := range []struct{ n, size int }{{7, 3}, {10, 4}, {3, 5}, {2, 7}, {8, 4}, {1, 1}} {
		for _, shuffle := range []bool{false, true} {
			t.Run(fmt.Sprintf("n=%d/size=%d/shuffle=%v", c.n, c.size, shuffle), func(t *testing.T) {
				var s Sampler = SequentialSampler{N: c.n}
				if shuffle {
					s = RandomSampler{N: c.n, Seed: 3}
				}
				bs, _ := NewBatchSampler(s, c.size, Rollover)
				want := gluonRollover(s, c.size, 12)
				for e := range want {
					got := bs.Batches(e)
					if !reflect.DeepEqual(got, want[e]) {
						t.Fatalf("epoch %d: got %v, want %v", e, got, want[e])
					}
					if bs.Len(e) != len(got) {
						t.Fatalf("epoch %d: Len %d, %d batches", e, bs.Len(e), len(got))
					}
				}
			})
		}
	}
	// The carried samples open the next epoch: 7 = 2·3 + 1, so epoch 1
	// starts with sample 6 of epoch 0.
	bs, _ := NewBatchSampler(SequentialSampler{N: 7}, 3, Rollover)
	if got := bs.Batches(1)[0]; !reflect.DeepEqual(got, []int{6, 0, 1}) {
		t.Fatalf("epoch 1 batch 0 = %v, want [6 0 1]", got)
	}
}

func TestBatchSamplerErrors(t *testing.T) {
	if _, err := NewBatchSampler(SequentialSampler{N: 3}, 0, Keep); err == nil {
		t.Error("batch size 0 accepted")
	}
	if _, err := NewBatchSampler(nil, 1, Keep); err == nil {
		t.Error("nil sampler accepted")
	}
	if _, err := NewBatchSampler(SequentialSampler{N: 3}, 1, LastBatch(9)); err == nil {
		t.Error("unknown policy accepted")
	}
	bs, _ := NewBatchSampler(SequentialSampler{N: 3}, 1, Keep)
	err := nd.Catch(func() { bs.Batches(-1) })
	if !errors.Is(err, &nd.Error{Kind: nd.ErrArgument}) {
		t.Errorf("negative epoch: %v", err)
	}
}

func TestParseLastBatch(t *testing.T) {
	for _, p := range []LastBatch{Keep, Discard, Rollover} {
		if got, err := ParseLastBatch(p.String()); err != nil || got != p {
			t.Errorf("ParseLastBatch(%q) = %v, %v", p, got, err)
		}
	}
	if _, err := ParseLastBatch("pad"); err == nil {
		t.Error("unknown policy parsed")
	}
}

func TestShardSamplerPartitionsEveryEpoch(t *testing.T) {
	tests := []struct {
		n, size  int
		dropLast bool
		wantLen  int
	}{
		{12, 4, false, 3},
		{10, 4, false, 3}, // padded with the order's first 2 samples
		{10, 4, true, 2},
		{3, 4, false, 1}, // fewer samples than workers: padding repeats
		{1000, 3, false, 334},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d/%d/drop=%v", tc.n, tc.size, tc.dropLast), func(t *testing.T) {
			base := RandomSampler{N: tc.n, Seed: 5}
			for epoch := range 3 {
				full := base.Order(epoch)
				seen := map[int]int{}
				for rank := range tc.size {
					s, err := NewShardSampler(base, rank, tc.size, tc.dropLast)
					if err != nil {
						t.Fatal(err)
					}
					o := s.Order(epoch)
					if len(o) != tc.wantLen || s.Len() != tc.wantLen {
						t.Fatalf("rank %d: %d samples (Len %d), want %d", rank, len(o), s.Len(), tc.wantLen)
					}
					for i, idx := range o {
						if want := full[(rank+i*tc.size)%tc.n]; idx != want {
							t.Fatalf("rank %d sample %d: %d, want %d (strided shards of the shared order)", rank, i, idx, want)
						}
						seen[idx]++
					}
				}
				covered := tc.n
				if tc.dropLast {
					covered = tc.wantLen * tc.size
				}
				if len(seen) != covered {
					t.Errorf("epoch %d: the shards cover %d distinct samples, want %d", epoch, len(seen), covered)
				}
				if !tc.dropLast && tc.n >= tc.size {
					dup := 0
					for _, c := range seen {
						dup += c - 1
					}
					if want := tc.wantLen*tc.size - tc.n; dup != want {
						t.Errorf("epoch %d: %d repeated samples, want %d (padding only)", epoch, dup, want)
					}
				}
			}
		})
	}
}

func TestShardSamplerRejectsBadShards(t *testing.T) {
	base := SequentialSampler{N: 3}
	for _, c := range []struct {
		base       Sampler
		rank, size int
		drop       bool
	}{{nil, 0, 1, false}, {base, 2, 2, false}, {base, -1, 2, false}, {base, 0, 0, false}, {base, 0, 4, true}} {
		if _, err := NewShardSampler(c.base, c.rank, c.size, c.drop); err == nil {
			t.Errorf("NewShardSampler(%v, %d, %d, %v) succeeded", c.base, c.rank, c.size, c.drop)
		}
	}
}
