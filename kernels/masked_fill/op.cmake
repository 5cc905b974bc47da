# masked_fill.Scalar (out of place): a tensor under a mask broadcast over a run of its
# dimensions, filled in one pass.
native_ops_op(masked_fill
  FEATURES features.cpp
  CUDA cuda.cpp cuda_kernels.cu
  OP_DB op_db.cpp)
