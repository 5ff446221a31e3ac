package tensorboard_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/goluon/goluon/gluon/tensorboard"
)

// A training loop logs its loss; the event file holds the file-version
// record and one record per call.
func Example() {
	dir, _ := os.MkdirTemp("", "runs")
	defer os.RemoveAll(dir)
	w, err := tensorboard.NewWriter(filepath.Join(dir, "lenet"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for step := int64(1); step <= 3; step++ {
		_ = w.AddScalar("train/loss", 1/float64(step), step)
	}
	_ = w.AddText("notes", "lr 0.1, batch 128", 3)
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}
	b, _ := os.ReadFile(w.Path())
	recs, err := tensorboard.ReadRecords(b)
	fmt.Println(len(recs), "records, error:", err)
	// Output: 5 records, error: <nil>
}
