package dist_test

import (
	"fmt"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/kvstore/dist"
)

// A training program selects the kind by name; everything else is the
// single-process loop. Build with -tags mpi and launch with
// mpirun -np 4 ./program. Each worker calls Step with its own batch; the
// trainer divides by the sum over the workers.
func Example() {
	var params *gluon.ParamDict // the network's parameters, initialised
	tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), dist.Kind, gluon.TrainerOpts{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dist.Finalize()
	rank := tr.KVStore().Rank()
	_ = rank // print progress on rank 0 only
}
