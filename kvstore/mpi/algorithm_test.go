package mpi

import "testing"

// TestSelectAlgorithm: the reduce-scatter-then-allgather algorithm is
// selected only for Open MPI releases whose ring fallback sums in-place
// buffers correctly, and never for other libraries.
func TestSelectAlgorithm(t *testing.T) {
	for _, c := range []struct {
		library string
		want    bool
	}{
		{"Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022", true},
		{"Open MPI v4.1.2, package: Open MPI", true},
		{"Open MPI v4.1.1, package: Open MPI", false},
		{"Open MPI v4.1.0, package: Debian OpenMPI", false},
		{"Open MPI v4.0.7, package: Open MPI", true},
		{"Open MPI v4.0.3, package: Debian OpenMPI", false},
		{"Open MPI v3.1.6, package: Open MPI", false},
		{"Open MPI v5.0.3, package: Open MPI", true},
		{"Open MPI v4.2.0, package: Open MPI", true},
		{"MPICH Version: 4.0.2\nMPICH Release date: Thu Apr  7 12:34:45 CDT 2022", false},
		{"", false},
	} {
		if got := selectAlgorithm(c.library); got != c.want {
			t.Errorf("%q: %v, want %v", c.library, got, c.want)
		}
	}
}
