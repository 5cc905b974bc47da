# add_.Tensor of same-shape contiguous floating tensors.
native_ops_op(add_
  CPP cpp.cpp
  OP_DB op_db.cpp)
