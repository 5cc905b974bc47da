# _softmax and _log_softmax over the last dimension.
native_ops_op(softmax
  FEATURES features.cpp
  CPP cpp.cpp
  CUDA cuda.cpp cuda_kernels.cu
  TRITON triton.cpp triton.py
  OP_DB op_db.cpp)
