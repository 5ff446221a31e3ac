// Package common holds what the tutorial programs share: their flags, the
// data sets they read, and the single JSON line each prints last.
package common

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/gluon/data/vision"
	"github.com/goluon/goluon/gluon/estimator"
)

// Flags are the options every tutorial program takes.
type Flags struct {
	Contexts    string // -contexts cpu:0,cpu:1 or gpu:0,gpu:1
	KVStore     string // -kvstore local|device
	Epochs      int
	BatchPerCtx int // -batch-size: per context, as in the tutorials
	DataDir     string
	Seed        uint64
	Out         string
	Workers     int  // data-loading goroutines
	Download    bool // fetch a missing data set (Fashion-MNIST: apt first)
	Limit       int  // use only the first Limit training (and Limit/5 test) samples; 0: all
	LR          float64
	LogDir      string // -logdir: TensorBoard event files go here ("": none)
	AMP         string // -amp: "" (float32), "fp16" or "bf16" (amp.go)
	Hybridize   bool   // -hybridize: run the network through traced graphs
	Profile     int    // -profile: profile this many training steps (after 5) and print the op table
	ProfileOut  string // -profile-trace: also write the profiled steps as a Chrome trace here
}

// Settings returns the flags that make a run another experiment when
// they change (the per-context batch, learning rate, seed, data limit and
// precision), for estimator.Checkpoint.Settings: a resume under other
// values is refused. Contexts, epochs and paths may change on a resume.
func (f *Flags) Settings(extra map[string]string) map[string]string {
	s := map[string]string{
		"batch-size": strconv.Itoa(f.BatchPerCtx),
		"lr":         strconv.FormatFloat(f.LR, 'g', -1, 64),
		"seed":       strconv.FormatUint(f.Seed, 10),
		"limit":      strconv.Itoa(f.Limit),
		"amp":        f.AMP,
	}
	maps.Copy(s, extra)
	return s
}

// Register defines the common flags on fs with the program's defaults.
func Register(fs *flag.FlagSet, d Flags) *Flags {
	f := &Flags{}
	fs.StringVar(&f.Contexts, "contexts", d.Contexts, "contexts to train on, e.g. cpu:0,cpu:1 or gpu:0,gpu:1 (GPUs need -tags cuda)")
	fs.StringVar(&f.KVStore, "kvstore", d.KVStore, "gradient all-reduce: local, device, or dist_sync (an MPI job: build with -tags mpi, launch with mpirun)")
	fs.IntVar(&f.Epochs, "epochs", d.Epochs, "number of epochs")
	fs.IntVar(&f.BatchPerCtx, "batch-size", d.BatchPerCtx, "batch size per context (the global batch is this times the number of contexts)")
	fs.StringVar(&f.DataDir, "data", d.DataDir, "directory holding the data set files (searched before the cache and system locations)")
	fs.Uint64Var(&f.Seed, "seed", d.Seed, "random seed (weights, shuffling, augmentation, dropout)")
	fs.StringVar(&f.Out, "out", d.Out, "output directory for parameters, metrics log and plots")
	fs.IntVar(&f.Workers, "workers", d.Workers, "data-loading goroutines")
	fs.BoolVar(&f.Download, "download", d.Download, "get a missing data set (Fashion-MNIST: apt-get install dataset-fashion-mnist when possible, else download)")
	fs.IntVar(&f.Limit, "limit", d.Limit, "train on only the first N samples (0: all); for smoke tests")
	fs.Float64Var(&f.LR, "lr", d.LR, "learning rate")
	fs.StringVar(&f.LogDir, "logdir", d.LogDir, "write TensorBoard event files into this directory (what each program logs: its README)")
	RegisterAMP(fs, &f.AMP)
	fs.BoolVar(&f.Hybridize, "hybridize", d.Hybridize, "run the network through traced graphs (gluon.Hybridize): the same results with less per-op overhead")
	fs.IntVar(&f.Profile, "profile", d.Profile, "profile N training steps after the first 5 and print the slowest ops (nd.StartProfile)")
	fs.StringVar(&f.ProfileOut, "profile-trace", d.ProfileOut, "with -profile, also write the profiled steps as a Chrome trace (chrome://tracing, Perfetto) to this file")
	return f
}

// ProfileHandlers returns the estimator handler that -profile asks for
// (none without it), writing its table to w.
func (f *Flags) ProfileHandlers(w io.Writer) []estimator.Handler {
	if f.Profile <= 0 {
		return nil
	}
	return []estimator.Handler{&estimator.Profile{Skip: 5, Steps: f.Profile, Top: 15, Table: w, TracePath: f.ProfileOut}}
}

// Model returns net as the program runs it: hybridized with -hybridize.
func (f *Flags) Model(net gluon.Block) gluon.Block {
	if f.Hybridize {
		return gluon.Hybridize(net, gluon.HybridOpts{})
	}
	return net
}

// Devices parses and checks -contexts.
func (f *Flags) Devices() ([]ctx.Context, error) {
	devs, err := ctx.Parse(f.Contexts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Check(devs...); err != nil {
		return nil, err
	}
	return devs, nil
}

// limit returns the first n samples of ds (all when n <= 0).
func limit(ds data.Dataset, n int) (data.Dataset, error) {
	if n <= 0 || n >= ds.Len() {
		return ds, nil
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return data.Subset(ds, idx)
}

// FashionMNIST loads the training and test sets. When they are missing and
// download is set it first tries Debian's package (apt-get install
// dataset-fashion-mnist, as root with apt available), then the official
// download into the cache; progress goes to log.
func FashionMNIST(f *Flags, log io.Writer) (train, test data.Dataset, err error) {
	tr, err := vision.FashionMNIST(f.DataDir, true)
	if errors.Is(err, vision.ErrNotFound) && f.Download {
		if aptInstall(log, "dataset-fashion-mnist") == nil {
			tr, err = vision.FashionMNIST(f.DataDir, true)
		}
		if err != nil {
			fmt.Fprintln(log, "downloading Fashion-MNIST into the cache ...")
			tr, err = vision.FashionMNIST(f.DataDir, true, vision.WithDownload(context.Background(), vision.DownloadOpts{Progress: log}))
		}
	}
	if err != nil {
		return nil, nil, err
	}
	te, err := vision.FashionMNIST(f.DataDir, false)
	if err != nil {
		return nil, nil, err
	}
	return limited(tr, te, f.Limit)
}

// CIFAR10 loads the CIFAR-10 binary training and test sets. CIFAR-10
// cannot be fetched on machines without internet access; the error then
// says where the files were looked for and how to get them.
func CIFAR10(f *Flags, log io.Writer) (train, test data.Dataset, err error) {
	var opts []vision.Option
	if f.Download {
		opts = append(opts, vision.WithDownload(context.Background(), vision.DownloadOpts{Progress: log}))
	}
	tr, err := vision.CIFAR10(f.DataDir, true, opts...)
	if err != nil {
		return nil, nil, err
	}
	te, err := vision.CIFAR10(f.DataDir, false)
	if err != nil {
		return nil, nil, err
	}
	return limited(tr, te, f.Limit)
}

func limited(tr, te data.Dataset, n int) (data.Dataset, data.Dataset, error) {
	tr2, err := limit(tr, n)
	if err != nil {
		return nil, nil, err
	}
	m := 0
	if n > 0 {
		m = max(n/5, 1)
	}
	te2, err := limit(te, m)
	return tr2, te2, err
}

// aptInstall installs a Debian package when apt-get is there and we are
// root; it reports what it does to log.
func aptInstall(log io.Writer, pkg string) error {
	if os.Geteuid() != 0 {
		return errors.New("not root")
	}
	apt, err := exec.LookPath("apt-get")
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "installing %s with apt-get ...\n", pkg)
	cmd := exec.Command(apt, "install", "-y", "-q", pkg)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	cmd.Stdout, cmd.Stderr = log, log
	return cmd.Run()
}

// Summary is the single JSON object every tutorial prints as its last
// line of output.
type Summary struct {
	Program       string   `json:"program"`
	Epochs        int      `json:"epochs"`
	Contexts      []string `json:"contexts"`
	TrainAcc      float64  `json:"train_acc"`
	ValAcc        float64  `json:"val_acc"`
	TrainLoss     float64  `json:"train_loss"`
	ValLoss       float64  `json:"val_loss"`
	SamplesPerSec float64  `json:"samples_per_sec"`
	Seconds       float64  `json:"seconds"`
	Params        string   `json:"params,omitempty"`
	MetricsLog    string   `json:"metrics_log,omitempty"`
	Extra         any      `json:"extra,omitempty"`
}

// Print writes s as one JSON line.
func (s Summary) Print(w io.Writer) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

// ContextNames lists devs as strings.
func ContextNames(devs []ctx.Context) []string {
	out := make([]string, len(devs))
	for i, d := range devs {
		out[i] = d.String()
	}
	return out
}

// OutPath returns a file path inside the output directory, creating it.
func (f *Flags) OutPath(name string) (string, error) {
	if err := os.MkdirAll(f.Out, 0o755); err != nil {
		return "", err
	}
	return filepath.Join(f.Out, name), nil
}

// Since returns seconds since t, rounded to milliseconds.
func Since(t time.Time) float64 { return float64(time.Since(t).Milliseconds()) / 1000 }
