//go:build mpi

package mpi

// serve runs on the MPI goroutine, the thread that initialised MPI: it
// executes the calls handed to it (Finalize, which MPI wants on that
// thread) until the channel closes.
func (c *Comm) serve() {
	for f := range c.calls {
		f()
	}
}
