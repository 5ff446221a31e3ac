package onnx

// TensorArray makes an array of an ONNX tensor, for the backend suite.
var TensorArray = constArray
