# multinomial of one sample a row: aten's exponential draw, then its checks, division and
# argmax in one kernel.
native_ops_op(multinomial
  FEATURES features.cpp
  CUDA cuda.cpp cuda_kernels.cu
  OP_DB op_db.cpp)
