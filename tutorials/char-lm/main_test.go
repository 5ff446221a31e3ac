package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tinyText writes a small text (the start of this package's own source,
// repeated) for the smoke tests.
func tinyText(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("data.go")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "tiny.txt")
	if err := os.WriteFile(p, bytes.Repeat(src, 3), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRunSmoke trains each model for a few steps on a tiny text over two
// CPU contexts and checks the summary line, the evaluations (the loss
// falls) and the files the PyTorch script reads.
func TestRunSmoke(t *testing.T) {
	text := tinyText(t)
	for _, model := range []string{"gpt", "lstm"} {
		t.Run(model, func(t *testing.T) {
			out := t.TempDir()
			var buf bytes.Buffer
			args := []string{"-model", model, "-text", text, "-out", out, "-steps", "30", "-warmup", "3",
				"-eval-interval", "15", "-eval-iters", "2", "-layers", "1", "-embed", "32", "-heads", "2",
				"-hidden", "32", "-context", "16", "-sample", "20", "-lr", "3e-3"}
			if err := run(args, &buf); err != nil {
				t.Fatalf("run: %v\noutput:\n%s", err, buf.String())
			}
			lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
			var sum struct {
				Program  string
				Contexts []string
				ValLoss  float64 `json:"val_loss"`
				Extra    map[string]any
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
				t.Fatalf("last line is not JSON: %v\n%s", err, buf.String())
			}
			if sum.Program != "char-lm" || len(sum.Contexts) != 2 || sum.Extra["model"] != model {
				t.Errorf("summary %+v", sum)
			}
			if tps, _ := sum.Extra["tokens_per_sec"].(float64); tps <= 0 {
				t.Errorf("tokens_per_sec = %v", sum.Extra["tokens_per_sec"])
			}
			evals := readEvals(t, filepath.Join(out, "metrics.jsonl"))
			if len(evals) != 3 || evals[2].Step != 30 {
				t.Fatalf("evaluations %+v, want steps 0, 15, 30", evals)
			}
			if first, last := evals[0].Val, evals[2].Val; !(last < first-0.2) || math.Abs(last-sum.ValLoss) > 1e-12 {
				t.Errorf("val loss %.4f → %.4f (summary %.4f): want a clear fall", first, last, sum.ValLoss)
			}
			if !strings.Contains(buf.String(), "step 15: train loss ") || !strings.Contains(buf.String(), "sample:\nfunc ") {
				t.Errorf("no evaluation line or sample in the output:\n%s", buf.String())
			}
			for _, f := range []string{"input.txt", "init.safetensors", "model.safetensors", "run.json", "loss.png"} {
				if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Size() == 0 {
					t.Errorf("%s: %v", f, err)
				}
			}
		})
	}
}

func readEvals(t *testing.T, path string) []evalPoint {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []evalPoint
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e evalPoint
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func TestRunErrors(t *testing.T) {
	text := tinyText(t)
	short := filepath.Join(t.TempDir(), "short.txt")
	if err := os.WriteFile(short, []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-model", "transformerxl", "-text", text}, "transformerxl"},
		{[]string{"-text", filepath.Join(t.TempDir(), "missing.txt")}, "no such file"},
		{[]string{"-text", short}, "too short"},
		{[]string{"-steps", "10", "-warmup", "10"}, "-warmup"},
		{[]string{"-heads", "3", "-text", text}, "multiple of -heads"},
		{[]string{"-contexts", "cpu:0,gpu:0", "-text", text}, "gpu"},
		{[]string{"extra"}, "unexpected"},
	} {
		err := run(append(tc.args, "-out", t.TempDir()), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q) = %v, want an error mentioning %q", tc.args, err, tc.want)
		}
	}
}

// TestGoCorpus reads the default corpus from this machine's Go
// distribution.
func TestGoCorpus(t *testing.T) {
	root, err := goroot()
	if err != nil {
		t.Skip(err)
	}
	text, err := goCorpus(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(text) < 500_000 || !bytes.Contains(text, []byte("package fmt")) || bytes.Contains(text, []byte("func Test")) {
		t.Errorf("corpus of %d bytes: want about 1 MB of the packages' non-test source", len(text))
	}
	if _, err := goCorpus(t.TempDir()); err == nil {
		t.Error("a directory without Go source gave no error")
	}
}

// TestSplitmix64 pins the sampler to the published sequence (seed 0), which
// the PyTorch script reproduces.
func TestSplitmix64(t *testing.T) {
	s := splitmix64(0)
	for i, want := range []uint64{0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F} {
		if got := s.next(); got != want {
			t.Errorf("value %d = %#x, want %#x", i, got, want)
		}
	}
	v := newVocab([]byte("hello"))
	if got := v.decode(v.encode([]byte("olleh"))); got != "olleh" || v.size() != 4 {
		t.Errorf("vocab round trip %q, size %d", got, v.size())
	}
}

// TestRunAMP: the GPT with -amp fp16 (loss scaling, gradients unscaled
// before clipping) and the LSTM with -amp bf16 train to a finite
// validation loss below the uniform one.
func TestRunAMP(t *testing.T) {
	text := tinyText(t)
	for _, c := range []struct{ model, amp string }{{"gpt", "fp16"}, {"lstm", "bf16"}} {
		t.Run(c.model+"/"+c.amp, func(t *testing.T) {
			var buf bytes.Buffer
			args := []string{"-model", c.model, "-text", text, "-out", t.TempDir(), "-steps", "30", "-warmup", "3",
				"-eval-interval", "15", "-eval-iters", "2", "-layers", "1", "-embed", "32", "-heads", "2",
				"-hidden", "32", "-context", "16", "-sample", "20", "-lr", "3e-3", "-amp", c.amp}
			if err := run(args, &buf); err != nil {
				t.Fatalf("run: %v\noutput:\n%s", err, buf.String())
			}
			lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
			var sum struct {
				ValLoss float64 `json:"val_loss"`
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
				t.Fatalf("last line is not JSON: %v\n%s", err, buf.String())
			}
			if !(sum.ValLoss > 0 && sum.ValLoss < math.Log(256)) {
				t.Errorf("validation loss %v", sum.ValLoss)
			}
		})
	}
}

// TestRunHybridize: -hybridize trains the GPT (with dropout) and the LSTM
// on two contexts to the eager run's evaluations, to the last bit.
func TestRunHybridize(t *testing.T) {
	text := tinyText(t)
	for _, model := range []string{"gpt", "lstm"} {
		t.Run(model, func(t *testing.T) {
			evals := func(extra ...string) []evalPoint {
				out := t.TempDir()
				var buf bytes.Buffer
				args := append([]string{"-model", model, "-text", text, "-out", out, "-steps", "20", "-warmup", "3",
					"-eval-interval", "10", "-eval-iters", "2", "-layers", "1", "-embed", "32", "-heads", "2",
					"-hidden", "32", "-context", "16", "-sample", "5", "-lr", "3e-3", "-dropout", "0.1"}, extra...)
				if err := run(args, &buf); err != nil {
					t.Fatalf("run %v: %v\noutput:\n%s", extra, err, buf.String())
				}
				return readEvals(t, filepath.Join(out, "metrics.jsonl"))
			}
			eager, hybrid := evals(), evals("-hybridize")
			if len(eager) != 3 || len(hybrid) != len(eager) {
				t.Fatalf("evaluations: eager %+v, hybridized %+v", eager, hybrid)
			}
			for i := range eager {
				if eager[i] != hybrid[i] {
					t.Errorf("evaluation %d: eager %+v, hybridized %+v", i, eager[i], hybrid[i])
				}
			}
		})
	}
}
