# mm at CUDA in 16-bit where a size or leading dimension is not whole 16-byte vectors.
native_ops_op(mm
  FEATURES features.cpp
  CPP cpp.cpp
  OP_DB op_db.cpp)
