# hypot of two same-shape contiguous float32 or float64 tensors at CPU: an op folder built
# into a plugin (examples/CMakeLists.txt), laid out as a built-in one under kernels/.
native_ops_op(hypot
  CPP cpp.cpp
  OP_DB op_db.cpp)
