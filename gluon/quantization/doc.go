// Package quantization is int8 quantization for CPU inference: dynamic
// quantization of Dense layers (PyTorch's
// torch.ao.quantization.quantize_dynamic(model, {nn.Linear},
// dtype=torch.qint8), MXNet's quantized FullyConnected) and post-training
// static quantization of convolutional networks (PyTorch's eager
// prepare, calibrate, convert; MXNet's quantize_net with
// calib_mode="naive").
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
// QuantizeStatic (or Prepare, calibration batches through the network,
// and Calibration.Convert) quantizes the nn.Conv2D and nn.Dense layers of
// a trained network with input quantization fixed by calibration; see
// Static quantization below.
//
//	paths, err := quantization.QuantizeStatic(net, quantization.StaticOpts{}, batches...)
//
// # Numerics of dynamic quantization
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
// # Static quantization
//
// Prepare watches every nn.Conv2D and nn.Dense of the block tree (those
// its parents call through fields of their own too: the float layer
// delegates to the observer, nn.Conv2D.Delegate and nn.Dense.Delegate)
// with an observer that records the range of its inputs (torch's
// MinMaxObserver; with StaticOpts.Histogram a 2048-bin histogram and
// torch's HistogramObserver range search, which drops outlying bins while
// that lowers the L2 error) and computes the float layer. After a few
// representative batches, Convert replaces each layer with its int8 form,
// Conv2D or a static Dense (NewConv2D, NewDenseStatic), whose inputs are
// quantized with the scale and zero point MinMaxQParams chooses for the
// recorded range: torch's MinMaxObserver arithmetic, 0..127 (reduce_range,
// as torch's x86 qconfigs) or 0..255 with StaticOpts.FullRange. Weights
// are symmetric int8 per output channel (per_channel_symmetric, torch's
// x86 default for static quantization), or per layer with
// StaticOpts.PerTensor. BatchNorm, pooling, activations and additions
// stay float32: each quantized layer takes and gives float32 values, like
// a torch layer between its own QuantStub and DeQuantStub, but without
// requantizing its output.
//
// Conv2D quantizes its NCHW input to NHWC bytes (nd.QuantizeNHWCU8; inputs
// beyond the calibrated range are clamped to 0 or 255, as torch's
// quantize_per_tensor does), unrolls them into one row per output pixel,
// tap by tap, the zero point standing for padding (nd.Im2RowU8; a 1×1
// convolution at stride 1 reads the bytes in place), multiplies the rows
// by the weights packed in the same [out][kh][kw][in] order with exact
// int32 sums and dequantizes, per group (nd.GemmU8S8F32):
//
//	y[c] = float32(float32(Σ (xq−z)·wq[c])·(sx·sw[c])) + b[c]
//
// then transposes the pixel-major result to NCHW with the fused ReLU of
// Act "relu" (nd.NHWCToNCHWF32); another activation runs after. Groups,
// stride, padding and dilation are nn.Conv2D's; a depthwise convolution
// runs as one narrow product per group, correct but slow.
//
// Against PyTorch 1.13 (testdata/make_static_goldens.py: a six-convolution
// CNN with a fused and an unfused ReLU, stride, padding, dilation, 4
// groups, depthwise, 1×1, a 3×2 kernel and a Linear head, each layer
// between a QuantStub and a DeQuantStub, MinMaxObserver with reduce_range
// and per-channel weights, two calibration batches, onednn): the int8
// weights and scales (per channel and per tensor), MinMaxObserver's
// parameters for 36 ranges and each layer's, and HistogramObserver's for
// five data sets are PyTorch's bit for bit; the calibrated ranges equal
// PyTorch's for the first layer and agree to 1.3e-7 of their width after
// it (the float convolutions that feed them round differently), giving the
// same zero points and the same scales (4 of 7) or within 1e-6. Given
// PyTorch's input to it, each layer's outputs are the dequantization above
// of PyTorch's exact int32 sums bit for bit, and requantized with
// PyTorch's output parameters they equal PyTorch's output bytes (all
// 13888); with that requantization between layers the whole network's
// outputs are PyTorch's bit for bit. Without it (our layers pass float32
// on) the int8 network is closer to the float one: 0.86% of the largest
// output against PyTorch's 3.75%.
//
// ResNet-18 (gluon/model/vision) quantized whole, its 20 convolutions and
// its classifier, after two calibration batches of 8 random images: a
// random network is a poor judge of int8 error, as the input-dependent
// part of its logits is a few percent of them (without care every random
// input gets the same class, which makes top-1 agreement 100% and
// meaningless). On torchvision's ResNet-18 with seeded random weights,
// BatchNorm statistics re-estimated on the calibration images and the
// classifier centred (testdata/resnet18_vs_torch.py, TestResNet18VsTorch;
// 224×224, 32 N(0, 1) images), the int8 logits differ from the float ones
// by 0.285 of the logits' RMS with MinMax calibration and 0.25 with the
// histogram, where PyTorch's int8 network (BatchNorm folded, everything
// requantized) differs by 0.355 and 0.321; top-1 agreement 18/32 for ours
// both ways, 13/32 and 17/32 for PyTorch's. The model zoo's ResNet-18
// (TestResNet18Static, 112×112, head centred): 0.336 and 16/32.
//
// # Speed
//
// BenchmarkDense times one Dense layer's whole forward pass (input copy,
// range, quantization, product, output) in float32 and int8, and
// testdata/bench_torch.py alternates it with PyTorch's dynamic quantized
// Linear; BenchmarkResNet18 times the model zoo's ResNet-18 at 224×224 in
// float32 and after QuantizeStatic. The latest tables, with the machine
// and method, are in the results folder beside this file: on this
// project's 2-core AVX-512 VNNI machine one Dense layer ran 3.0–5.5×
// faster in int8 than in float32, and ResNet-18 2.9× at batch 1 and 1.5×
// at batch 8 on two threads. The int8 network spends about 4 ms of CPU
// per image in the VNNI kernel; the rest goes to its host passes (NHWC
// quantization, the unrolling, the transposition, copies between arrays
// and the host, not parallel) and to the float32 layers between the
// quantized ones.
//
// # Limits
//
// A quantized layer is for inference: inside autograd.Record it panics
// with an *nd.Error of kind ErrGraph. It runs on CPU contexts and float32
// inputs; gluon.Hybridize runs a network that holds one eagerly
// (EagerOnly). A dynamic Dense panics (ErrArgument) on an input with NaN
// or infinite values: the batch's range would be meaningless; a static
// layer quantizes with its fixed parameters, clamping values beyond them
// (a NaN becomes 0). QuantizeDynamic quantizes only nn.Dense: the
// recurrent layers of gluon/rnn (which multiply by their weight_ih and
// weight_hh parameters inside their own Forward, not through Dense
// layers) stay float32. A layer that its parent keeps in a struct field
// and calls directly (BERT's attention and feed-forward layers, nn's
// transformer layers, a ResNet block's convolutions) delegates to its
// quantized replacement, so such networks run int8 whole. Static
// quantization takes nn.Conv2D and nn.Dense, not Conv1D, Conv3D or
// transposed convolutions; it does not fold BatchNorm into the preceding
// convolution (torch's fuse_modules: with per-channel weights that
// changes the int8 weights little and would save the BatchNorm pass),
// nor keep activations in int8 between layers.
package quantization
