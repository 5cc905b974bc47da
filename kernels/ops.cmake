# The built-in ops: one folder of kernels/ each, in registration order. A folder listed
# earlier registers its overrides earlier; within a folder the DSLs register in the DSL
# table's order (lib/src/dsls/dsls.cmake). In every (op, key) graph the first registered
# override whose cond accepts a call runs.
set(NATIVE_OPS_OPS
  bmm
  softmax
  softmax_backward
  add_
  norm
  argmax
  embedding_backward
  topk
  mm
  masked_fill
  multinomial)
