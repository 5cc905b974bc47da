# argmax, argmin, max.dim and min.dim over the last dimension.
native_ops_op(argmax
  FEATURES features.cpp
  CUDA cuda.cpp cuda_kernels.cu
  OP_DB op_db.cpp)
