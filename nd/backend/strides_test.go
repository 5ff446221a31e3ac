package backend_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/goluon/goluon/nd/backend"
)

func TestContiguousStrides(t *testing.T) {
	if got := backend.ContiguousStrides([]int{2, 3, 4}); !cmp.Equal(got, []int{12, 4, 1}) {
		t.Errorf("ContiguousStrides([2 3 4]) = %v", got)
	}
}

func TestCoalesce(t *testing.T) {
	tests := []struct {
		name      string
		shape     []int
		strides   [][]int
		wantShape []int
		wantSt    [][]int
	}{
		{"contiguous merges to one dim", []int{2, 3, 4}, [][]int{{12, 4, 1}}, []int{24}, [][]int{{1}}},
		{"size-1 dims drop", []int{1, 5, 1}, [][]int{{5, 1, 1}}, []int{5}, [][]int{{1}}},
		{"broadcast operand keeps dims apart", []int{2, 3}, [][]int{{3, 1}, {0, 1}}, []int{2, 3}, [][]int{{3, 1}, {0, 1}}},
		{"transpose does not merge", []int{2, 3}, [][]int{{1, 2}}, []int{2, 3}, [][]int{{1, 2}}},
		{"all ones", []int{1, 1}, [][]int{{1, 1}}, []int{1}, [][]int{{0}}},
	}
	for _, tc := range tests {
		sh, st := backend.Coalesce(tc.shape, tc.strides...)
		if !cmp.Equal(sh, tc.wantShape) || !cmp.Equal(st, tc.wantSt) {
			t.Errorf("%s: Coalesce = %v %v, want %v %v", tc.name, sh, st, tc.wantShape, tc.wantSt)
		}
	}
}

func TestMergeReduceAxes(t *testing.T) {
	tests := []struct {
		name    string
		shape   []int
		axes    []bool
		wantSh  []int
		wantRed []bool
	}{
		{"neighbours with one flag merge", []int{2, 3, 4}, []bool{false, true, true}, []int{2, 12}, []bool{false, true}},
		{"size-1 dims drop", []int{2, 1, 4}, []bool{false, true, false}, []int{8}, []bool{false}},
		{"alternating flags stay apart", []int{2, 3, 4}, []bool{true, false, true}, []int{2, 3, 4}, []bool{true, false, true}},
		{"all ones", []int{1, 1}, []bool{true, true}, nil, nil},
	}
	for _, tc := range tests {
		sh, red := backend.MergeReduceAxes(tc.shape, tc.axes)
		if !cmp.Equal(sh, tc.wantSh) || !cmp.Equal(red, tc.wantRed) {
			t.Errorf("%s: MergeReduceAxes = %v %v, want %v %v", tc.name, sh, red, tc.wantSh, tc.wantRed)
		}
	}
}
