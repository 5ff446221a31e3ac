package gluon

import (
	"fmt"
	"io"
	"reflect"
	"text/tabwriter"

	"github.com/goluon/goluon/nd"
)

// Chain is implemented by containers that apply their children one after
// the other (nn.Sequential): Summary lists such a container's children
// with their own output shapes instead of the container as one row.
type Chain interface {
	Block
	// Chained reports that Forward applies Children in order.
	Chained() bool
}

// Summary runs b once on x (in predict mode, not recorded, in a session of
// its own so that the caller's state is untouched) and writes a table like
// Keras' model.summary or Gluon's Block.summary: one row per layer with its
// output shape and parameter count, then the totals. Layers inside Chain
// containers are listed one by one; any other block is one row, its
// parameters counted with its children's. Deferred parameter shapes are
// inferred by the run, so call it after Initialize. It returns the total
// number of parameters.
func Summary(w io.Writer, b Block, x *nd.NDArray) (total int, err error) {
	s := nd.NewSession("summary")
	scope := s.NewScope()
	defer scope.Close()
	in := s.CopyOf(x, x.Context())
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Layer (type)\tOutput shape\tParams\n")
	fmt.Fprintf(tw, "input\t%v\t-\n", x.Shape())
	var trainable int
	err = nd.Catch(func() {
		s.PredictMode(func() { summarize(tw, b, in, &total, &trainable) })
	})
	if err != nil {
		return 0, fmt.Errorf("gluon: Summary: %w", err)
	}
	tw.Flush()
	fmt.Fprintf(w, "Total params: %d (trainable %d, fixed %d)\n", total, trainable, total-trainable)
	return total, nil
}

// summarize writes the rows of b applied to x and returns its output.
func summarize(w io.Writer, b Block, x *nd.NDArray, total, trainable *int) *nd.NDArray {
	if c, ok := b.(Chain); ok && c.Chained() {
		for _, child := range b.Meta().Children() {
			cb, ok := child.(Block)
			if !ok {
				nd.Panicf("gluon.Summary", nd.ErrArgument, "%s in a chain is not a single-input Block", child.Meta().Name())
			}
			x = summarize(w, cb, x, total, trainable)
		}
		return x
	}
	y := b.Forward(x)
	n, t := 0, 0
	for _, p := range CollectParams(b).List() {
		size := 1
		for _, d := range p.Shape() {
			size *= d
		}
		n += size
		if p.GradReq() != nd.GradNull {
			t += size
		}
	}
	*total += n
	*trainable += t
	fmt.Fprintf(w, "%s (%s)\t%v\t%d\n", b.Meta().Name(), typeName(b), y.Shape(), n)
	return y
}

// typeName is the block's Go type without package and pointer.
func typeName(b Block) string {
	t := reflect.TypeOf(b)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}
