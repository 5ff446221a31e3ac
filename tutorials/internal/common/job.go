package common

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/kvstore/dist"
	"github.com/goluon/goluon/kvstore/mpi"
)

// Job is this process's place in a run: rank 0 of 1 for a single process,
// or one worker of an MPI job when -kvstore names a distributed kind
// (dist_sync). Only rank 0 prints and writes files.
type Job struct {
	Rank, Size int
}

// Job returns the job for -kvstore. A distributed kind initialises MPI
// here, so the program must be built with -tags mpi and launched by
// mpirun:
//
//	go build -tags mpi -o gluon-mnist ./tutorials/gluon-mnist
//	mpirun -np 4 ./gluon-mnist -kvstore dist_sync
func (f *Flags) Job() (Job, error) {
	if !strings.HasPrefix(f.KVStore, "dist") {
		return Job{Rank: 0, Size: 1}, nil
	}
	comm, err := mpi.Init()
	if err != nil {
		return Job{}, err
	}
	return Job{Rank: comm.Rank(), Size: comm.Size()}, nil
}

// Close ends the job: it finalises MPI in a distributed one.
func (j Job) Close() error { return dist.Finalize() }

// Chief reports whether this process prints and writes (rank 0).
func (j Job) Chief() bool { return j.Rank == 0 }

// Out returns w on rank 0 and a writer that drops everything elsewhere.
func (j Job) Out(w io.Writer) io.Writer {
	if j.Chief() {
		return w
	}
	return io.Discard
}

// TrainOptions adapts training-loader options to the job: in a
// distributed job each worker gets its shard of every epoch's shuffled
// order (a ShardSampler over the same RandomSampler on every worker), so
// the workers see the data set once per epoch together.
func (j Job) TrainOptions(n int, o data.LoaderOpts) (data.LoaderOpts, error) {
	if j.Size <= 1 {
		return o, nil
	}
	var base data.Sampler = data.SequentialSampler{N: n}
	if o.Shuffle {
		base = data.RandomSampler{N: n, Seed: o.Seed}
	}
	s, err := data.NewShardSampler(base, j.Rank, j.Size, false)
	if err != nil {
		return o, err
	}
	o.Shuffle, o.Sampler = false, s
	return o, nil
}

// Finish ends the job when the run succeeded: deferred as
// job.Finish(&err), it finalises MPI if *err is nil and reports a failure
// to finalise through *err. After a failure it does nothing: mpirun ends
// the job, and finalising could wait for workers that have died.
func (j Job) Finish(err *error) {
	if *err == nil {
		*err = j.Close()
	}
}

// Summaries returns the summary JSON objects of program found in output
// (one per line that starts with {"program":"<program>"), in order.
func Summaries(output, program string) ([]map[string]any, error) {
	var out []map[string]any
	prefix := `{"program":"` + program + `"`
	for _, line := range strings.Split(output, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			return nil, fmt.Errorf("summary line %q: %w", line, err)
		}
		out = append(out, m)
	}
	return out, nil
}
