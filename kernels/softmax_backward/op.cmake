# _softmax_backward_data and _log_softmax_backward_data over the last dimension.
native_ops_op(softmax_backward
  FEATURES features.cpp
  CUDA cuda.cpp cuda_kernels.cu
  OP_DB op_db.cpp)
