# add_.Tensor of same-shape contiguous floating tensors.
native_ops_op(add_
  FEATURES features.cpp
  CPP cpp.cpp
  OP_DB op_db.cpp)
