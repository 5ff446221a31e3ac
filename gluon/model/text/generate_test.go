package text_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/nd"
)

// TestGenerateSampling: sampling is deterministic for a seed (nd.Seed and
// GenerateOpts.Seed) whatever is drawn in between, other seeds give other
// tokens, top-k 1 is greedy, EOS ends the generation with that token,
// and every token lies in the vocabulary.
func TestGenerateSampling(t *testing.T) {
	m := loadTiny(t, tinyConfig())
	prompt := []int64{11, 42, 7}
	gen := func(o text.GenerateOpts, n int) []int64 {
		t.Helper()
		out, err := m.Generate(prompt, n, o)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	nd.Seed(3)
	a := gen(text.GenerateOpts{Seed: 1, Temperature: 1.5}, 20)
	nd.RandomUniform(ctx.CPU(0), nd.Float32, 0, 1, 5) // other draws in between
	b := gen(text.GenerateOpts{Seed: 1, Temperature: 1.5}, 20)
	c := gen(text.GenerateOpts{Seed: 2, Temperature: 1.5}, 20)
	if !slices.Equal(a, b) {
		t.Errorf("seed 1 gave %v, then %v", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 1 and 2 both gave %v", a)
	}
	for _, tok := range append(a, c...) {
		if tok < 0 || tok >= 97 {
			t.Fatalf("token %d outside the vocabulary", tok)
		}
	}
	greedy := gen(text.GenerateOpts{Greedy: true}, 10)
	if k1 := gen(text.GenerateOpts{TopK: 1, Seed: 5}, 10); !slices.Equal(k1, greedy) {
		t.Errorf("top-k 1 gave %v, greedy %v", k1, greedy)
	}
	if p := gen(text.GenerateOpts{TopP: 1e-9, Seed: 5}, 10); !slices.Equal(p, greedy) {
		t.Errorf("a tiny top-p gave %v, greedy %v", p, greedy)
	}
	stop := gen(text.GenerateOpts{Greedy: true, EOS: []int64{greedy[2], 96}}, 10)
	if want := greedy[:slices.Index(greedy, greedy[2])+1]; !slices.Equal(stop, want) {
		t.Errorf("with EOS %d: %v, want %v", greedy[2], stop, want)
	}
	if none := gen(text.GenerateOpts{}, 0); len(none) != 0 {
		t.Errorf("0 new tokens gave %v", none)
	}
}

// TestGenerateErrors: arguments Generate cannot take are errors naming
// the problem.
func TestGenerateErrors(t *testing.T) {
	m := loadTiny(t, tinyConfig())
	for _, tc := range []struct {
		name   string
		prompt []int64
		n      int
		o      text.GenerateOpts
		want   string
	}{
		{"empty prompt", nil, 3, text.GenerateOpts{}, "empty prompt"},
		{"negative count", []int64{1}, -1, text.GenerateOpts{}, "-1 new tokens"},
		{"too long", make([]int64, 30), 4, text.GenerateOpts{}, "need 33 positions and exceed the 32 positions"},
		{"prompt too long", make([]int64, 33), 0, text.GenerateOpts{}, "need 33 positions and exceed the 32 positions"},
		{"temperature", []int64{1}, 3, text.GenerateOpts{Temperature: -1}, "temperature"},
		{"top-k", []int64{1}, 3, text.GenerateOpts{TopK: -2}, "top-k"},
		{"top-p", []int64{1}, 3, text.GenerateOpts{TopP: 1.5}, "top-p"},
		{"token", []int64{1, 97}, 3, text.GenerateOpts{}, "token 97 at 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.Generate(tc.prompt, tc.n, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want an error about %q", err, tc.want)
			}
		})
	}
	if _, err := text.NewGPT2(tinyConfig()).Generate([]int64{1}, 1, text.GenerateOpts{}); err == nil {
		t.Error("an uninitialised model generated")
	}
}

// TestFilter: temperature, top-k (ties with the k-th kept) and top-p
// shape the distribution as Hugging Face's logits warpers do.
func TestFilter(t *testing.T) {
	logits := []float64{1, 3, 2, 3, 0}
	soft := func(x []float64) []float64 {
		out := make([]float64, len(x))
		sum := 0.0
		for i, v := range x {
			out[i] = math.Exp(v)
			sum += out[i]
		}
		for i := range out {
			out[i] /= sum
		}
		return out
	}
	inf := math.Inf(-1)
	for _, tc := range []struct {
		name string
		o    text.GenerateOpts
		want []float64
	}{
		{"none", text.GenerateOpts{}, soft(logits)},
		{"temperature 2", text.GenerateOpts{Temperature: 2}, soft([]float64{0.5, 1.5, 1, 1.5, 0})},
		{"top-k 1 keeps the tie", text.GenerateOpts{TopK: 1}, soft([]float64{inf, 3, inf, 3, inf})},
		{"top-k 3", text.GenerateOpts{TopK: 3}, soft([]float64{inf, 3, 2, 3, inf})},
		{"top-k beyond the vocabulary", text.GenerateOpts{TopK: 9}, soft(logits)},
		{"top-p 0.5", text.GenerateOpts{TopP: 0.5}, func() []float64 {
			p := soft(logits) // the two 3s have 0.39 each: 0.78 ≥ 0.5 after the second
			return []float64{0, p[1], 0, p[3], 0}
		}()},
		{"top-p 0.2", text.GenerateOpts{TopP: 0.2}, func() []float64 {
			p := soft(logits) // of the tied 3s the higher id stays, as HF's warper (torch.sort ascending) keeps it
			return []float64{0, 0, 0, p[3], 0}
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := text.Filter(logits, tc.o)
			for i := range got {
				if math.Abs(got[i]-tc.want[i]) > 1e-12 {
					t.Fatalf("%v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestGenerateReleasesMemory: Generate releases what it allocates (its
// steps' temporaries and its cache): later calls leave the memory in use
// where the first left it.
func TestGenerateReleasesMemory(t *testing.T) {
	m := loadTiny(t, tinyConfig())
	if _, err := m.Generate([]int64{1, 2}, 20, text.GenerateOpts{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	before := nd.MemoryStats(ctx.CPU(0)).InUse
	for seed := range uint64(3) {
		if _, err := m.Generate([]int64{1, 2, 3}, 25, text.GenerateOpts{Seed: seed, TopP: 0.9}); err != nil {
			t.Fatal(err)
		}
	}
	if after := nd.MemoryStats(ctx.CPU(0)).InUse; after != before {
		t.Errorf("%d bytes in use after more calls, %d after the first", after, before)
	}
}

// TestFilterTopKRandom: top-k keeps exactly the logits at or above the
// k-th largest, for random logits and every k up to the vocabulary.
func TestFilterTopKRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	logits := make([]float64, 300)
	for i := range logits {
		logits[i] = float64(rng.IntN(60)) / 7 // many ties
	}
	sorted := slices.Clone(logits)
	slices.Sort(sorted)
	slices.Reverse(sorted)
	for _, k := range []int{1, 2, 5, 40, 299, 300} {
		p := text.Filter(logits, text.GenerateOpts{TopK: k})
		for i, v := range logits {
			if kept := p[i] > 0; kept != (v >= sorted[k-1]) {
				t.Fatalf("top-k %d: logit %g (the k-th largest %g) kept %v", k, v, sorted[k-1], kept)
			}
		}
	}
}

// TestGenerateOnToken: OnToken sees each token as it is chosen, in order,
// and returning false stops after that token.
func TestGenerateOnToken(t *testing.T) {
	m := loadTiny(t, tinyConfig())
	g := readGoldens(t)
	var seen []int64
	got, err := m.Generate(g.Prompt, 8, text.GenerateOpts{Greedy: true, OnToken: func(tok int64) bool {
		seen = append(seen, tok)
		return len(seen) < 5
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, g.Greedy[:5]) || !slices.Equal(seen, got) {
		t.Errorf("generated %v, streamed %v; want %v for both", got, seen, g.Greedy[:5])
	}
}

// TestGenerateFullContext: the last new token is never fed back, so the
// prompt and the new tokens but the last must fit n_positions: a
// 32-token prompt gets one token, a 29-token one four (positions 0..31),
// each the argmax of the uncached Forward on the whole sequence so far.
func TestGenerateFullContext(t *testing.T) {
	m := loadTiny(t, tinyConfig())
	prompt := make([]int64, 32)
	for i := range prompt {
		prompt[i] = int64((i*37 + 11) % 97)
	}
	for _, tc := range []struct{ prompt, n int }{{32, 1}, {31, 2}, {29, 4}, {1, 32}} {
		got, err := m.Generate(prompt[:tc.prompt], tc.n, text.GenerateOpts{Greedy: true})
		if err != nil {
			t.Errorf("%d-token prompt, %d new tokens: %v", tc.prompt, tc.n, err)
			continue
		}
		seq := slices.Clone(prompt[:tc.prompt])
		autograd.PredictMode(func() {
			for range tc.n {
				logits := m.Forward(nd.FromSlice(ctx.CPU(0), seq, 1, len(seq)))
				seq = append(seq, int64(argmax(nd.SliceAxis(logits, len(seq)-1, len(seq), 1).Float64s())))
			}
		})
		if want := seq[tc.prompt:]; !slices.Equal(got, want) {
			t.Errorf("%d-token prompt: %v, uncached Forward %v", tc.prompt, got, want)
		}
	}
	for _, tc := range []struct{ prompt, n int }{{32, 2}, {29, 5}} {
		if _, err := m.Generate(prompt[:tc.prompt], tc.n, text.GenerateOpts{Greedy: true}); err == nil {
			t.Errorf("%d-token prompt, %d new tokens: no error", tc.prompt, tc.n)
		}
	}
}

// TestGenerateOnTokenEOS: OnToken sees the EOS token as well, before the
// generation ends on it: the streamed tokens are the returned ones.
func TestGenerateOnTokenEOS(t *testing.T) {
	m := loadTiny(t, tinyConfig())
	g := readGoldens(t) // greedy 15 18 27 27 12 ...
	eos := g.Greedy[2]
	want := g.Greedy[:slices.Index(g.Greedy, eos)+1]
	for _, keepGoing := range []bool{true, false} {
		var seen []int64
		got, err := m.Generate(g.Prompt, 8, text.GenerateOpts{Greedy: true, EOS: []int64{eos}, OnToken: func(tok int64) bool {
			seen = append(seen, tok)
			return keepGoing || tok != eos
		}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) || !slices.Equal(seen, want) {
			t.Errorf("OnToken returning %v: generated %v, streamed %v; want %v for both", keepGoing, got, seen, want)
		}
	}
}

// TestFilterTopPTies: with tied probabilities at the top-p boundary the
// higher token id stays, as in Hugging Face's TopPLogitsWarper (its stable
// ascending sort removes the lower id first): logits [1, -1, -2, 0, 1]
// with top-p 0.1 keep token 4 alone.
func TestFilterTopPTies(t *testing.T) {
	got := text.Filter([]float64{1, -1, -2, 0, 1}, text.GenerateOpts{TopP: 0.1})
	for i, p := range got {
		if (i == 4) != (p > 0) {
			t.Fatalf("Filter kept %v, want token 4 alone", got)
		}
	}
}
