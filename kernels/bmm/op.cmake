# bmm when the inner dimension is 1 (a batched outer product).
native_ops_op(bmm
  FEATURES features.cpp
  CPP cpp.cpp
  CUDA cuda.cpp cuda_kernels.cu
  TRITON triton.cpp triton.py
  OP_DB op_db.cpp)
