// Package quantization is int8 dynamic quantization for CPU inference:
// PyTorch's torch.ao.quantization.quantize_dynamic(model, {nn.Linear},
// dtype=torch.qint8) and MXNet's quantized FullyConnected.
//
// QuantizeDynamic replaces the nn.Dense layers of a trained network, in
// place, with Dense layers that keep signed 8-bit weights (one scale per
// layer, or per output unit with Opts.PerChannel) and quantize their
// input to unsigned bytes on every call, from that call's range. The
// product runs in int32 on nd/cpu's int8 kernels (GemmU8S8F32: AVX-512
// VNNI, AVX2, or Go, chosen at run time, all giving the same bits) and
// is dequantized with the bias added in float32. NewDense quantizes one
// layer; Save and Load keep a quantized network's int8 state in a
// safetensors file (gluon.SaveParameters does not see it: the quantized
// layers have no Parameters).
//
//	net := buildAndTrain()
//	paths, err := quantization.QuantizeDynamic(net, quantization.Opts{})
//	y := net.Forward(x) // int8 Dense layers, everything else as before
//
// # Numerics
//
// The defaults are PyTorch 1.13's on x86 (default_dynamic_qconfig):
// weights symmetric per tensor, scale max|w|/127.5 (MinMaxObserver,
// at least 2⁻²³), w_q = round(w·(1/scale)) clamped to [−128, 127]
// (SymmetricScale, QuantizeInt8); activations per call with
// quant_utils::ChooseQuantizationParams over the whole input's range with
// reduce_range, 0..127 (ChooseQParams), x_q = round(x·(1/sx)) + z
// (nd/cpu's QuantizeU8); then y = float32(float32(Σ(x_q−z)·w_q)·(sx·sw)) + b.
// Opts.FullRange uses 0..255 instead.
//
// Against PyTorch 1.13 (Debian's python3-torch, oneDNN engine; the
// goldens in testdata, made by testdata/make_goldens.py, for a
// 30→64→48→10 MLP and seven inputs): the int8 weights and their scales,
// per tensor and per channel, the activations' scale and zero point
// (also for 13 edge ranges: all zero, tiny, one-sided, ±1e30) and their
// quantized bytes are PyTorch's bit for bit. The int32 sums are then the
// same, and each layer's outputs differ from PyTorch's only in the float
// rounding of the dequantization: at most 2.3 ulps of max(|y|, |bias|)
// (the test allows 8); the whole MLP's outputs agree to 3.3e-7 of the
// largest. A tiny BERT classifier (gluon/model/text's fixture;
// testdata/make_bert_goldens.py) quantized whole gives the same quantized
// activation bytes as PyTorch's quantize_dynamic in all 14 layers and
// logits within 6e-8 of PyTorch's int8 ones. The quantized MLP differs from the float32 one by 2.7% (per
// tensor) and 2.1% (per channel) of its largest output.
//
// # Speed
//
// Measured 2026-11-29 on this project's 2-core AMD EPYC VM (AVX-512 with
// VNNI and BF16), a host shared with other jobs (load average 3–8 during
// the runs): one Dense layer's forward pass (BenchmarkDense: the whole
// call, input copy, range, quantization, product and output array
// included), one thread (GOMAXPROCS=1, torch.set_num_threads(1)), median
// time per call over 15 rounds that alternate Go and PyTorch
// (testdata/bench_torch.py), with the range of the per-round ratios:
//
//	layer      batch  float32  int8   int8 vs   PyTorch int8      PyTorch/Go
//	                  µs       µs     float32   (oneDNN) µs       (int8)
//	512×512        1     10.6    3.5    3.0×        57.8          17.0 [11.6–41.0]
//	512×512       32    102.5   22.4    4.6×        68.1           2.7 [1.9–6.7]
//	512×512      128    315.2   87.2    3.6×       139.9           1.5 [1.4–5.1]
//	1024×1024      1     46.2   11.4    4.1×        79.4           7.0 [5.9–26.6]
//	1024×1024     32    457.0   82.8    5.5×       159.3           1.9 [1.6–4.0]
//	1024×1024    128   1292.1  312.2    4.1×       402.9           1.3 [1.2–10.9]
//
// The VNNI kernel alone does about 500·10⁹ multiply-adds a second on one
// core at batch 128 (nd/cpu's BenchmarkGemmU8S8F32, best of 15), the AVX2
// one about 120·10⁹. On two cores the product itself runs 1.9× faster in
// the best case (1024×1024, batch 128: 141 µs against 268 µs), but on
// this shared host the second core was seldom free: the two-thread
// medians were no better than one thread's (often worse), and PyTorch's
// two OpenMP
// threads stalled for milliseconds, so no two-thread comparison is
// quoted. PyTorch's numbers are its oneDNN engine (Debian's torch has no
// FBGEMM).
//
// # Limits
//
// A quantized layer is for inference: inside autograd.Record it panics
// with an *nd.Error of kind ErrGraph. It runs on CPU contexts and float32
// inputs; an input with NaN or infinite values panics (ErrArgument): the
// batch's range would be meaningless. gluon.Hybridize runs a network that
// holds one eagerly (Dense.EagerOnly). Only nn.Dense is quantized: the
// recurrent layers of gluon/rnn (which multiply by their weight_ih and
// weight_hh parameters inside their own Forward, not through Dense
// layers) and the convolutions stay float32. A Dense that its parent
// keeps in a struct field and calls directly (BERT's attention and
// feed-forward layers, nn's transformer layers) delegates to its quantized
// replacement (nn.Dense.Delegate), so such networks run int8 whole.
package quantization
