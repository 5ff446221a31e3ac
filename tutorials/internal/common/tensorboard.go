package common

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/estimator"
	"github.com/goluon/goluon/gluon/tensorboard"
)

// TensorBoard returns, when -logdir is set and this process writes files
// (chief), an estimator handler writing the epochs' metrics, the batch loss
// every 50 steps and histograms of params to a new event file in -logdir,
// and the function that closes it; otherwise no handler and a no-op.
func (f *Flags) TensorBoard(params *gluon.ParamDict, chief bool) ([]estimator.Handler, func() error, error) {
	if f.LogDir == "" || !chief {
		return nil, func() error { return nil }, nil
	}
	w, err := tensorboard.NewWriter(f.LogDir)
	if err != nil {
		return nil, nil, err
	}
	h := tensorboard.NewHandler(w, tensorboard.HandlerOpts{Every: 50, Params: params})
	return []estimator.Handler{h}, w.Close, nil
}

// TensorBoardWriter returns a writer on a new event file in -logdir for a
// training loop of its own, or nil when -logdir is empty or this process
// does not write files (not chief). Close the writer at the end.
func (f *Flags) TensorBoardWriter(chief bool) (*tensorboard.Writer, error) {
	if f.LogDir == "" || !chief {
		return nil, nil
	}
	return tensorboard.NewWriter(f.LogDir)
}

// CloseInto calls closeFn and stores its error in *errp unless *errp holds
// one already: `defer common.CloseInto(&err, closeTB)` in a function with a
// named error result.
func CloseInto(errp *error, closeFn func() error) {
	if cerr := closeFn(); *errp == nil {
		*errp = cerr
	}
}
