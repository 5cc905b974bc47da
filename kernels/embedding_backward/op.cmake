# embedding_dense_backward: the gradient of an embedding table's weight.
native_ops_op(embedding_backward
  FEATURES features.cpp
  CUDA cuda.cpp cuda_kernels.cu
  OP_DB op_db.cpp)
