# native_layer_norm, _fused_rms_norm and _fused_rms_norm_backward over the last dimensions.
native_ops_op(norm
  FEATURES features.cpp
  CUDA cuda.cpp cuda_kernels.cu cuda_backward_kernels.cu
  TRITON triton.cpp triton.py
  OP_DB op_db.cpp)
