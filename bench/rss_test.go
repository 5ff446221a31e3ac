package bench

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/optimizer"
)

// BenchmarkTrainStepLeNetRSS runs exactly the steps of
// BenchmarkTrainStepLeNet/1ctx (LeNet, SGD, batch 128, cpu(0)) and then
// reports the process's peak resident set size (VmHWM) in MiB as
// peak-RSS-MiB. The peak covers the whole process, so it only means
// something when this benchmark runs alone in its test binary:
//
//	go test ./bench/ -run '^$' -bench 'TrainStepLeNetRSS$' -benchtime 200x
//
// (compare.sh does so). It includes the Go runtime's heap headroom (GOGC
// is left at its default) and the binary's own pages. PyTorch's side is
// pytorch_bench.py --rss-only.
func BenchmarkTrainStepLeNetRSS(b *testing.B) {
	trainStepBench(b, modelzoo.LeNet(), optimizer.NewSGD(0.04), []int{128, 1, 28, 28}, []ctx.Context{ctx.CPU(0)})
	kib, err := peakRSSKiB()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(kib)/1024, "peak-RSS-MiB")
}

// peakRSSKiB reads the process's peak resident set size (VmHWM, in KiB)
// from /proc/self/status.
func peakRSSKiB() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, os.ErrNotExist
}

func TestPeakRSSKiB(t *testing.T) {
	kib, err := peakRSSKiB()
	if err != nil {
		t.Skipf("no VmHWM: %v", err)
	}
	if kib <= 0 {
		t.Errorf("peak RSS %d KiB, want > 0", kib)
	}
}
