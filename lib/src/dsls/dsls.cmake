# The DSL table: one folder of lib/src/dsls/ per entry. The order is the order of
# `native-ops dsls` and, within an op folder, the order its overrides register in (the
# first registered wins).
set(NATIVE_OPS_DSLS cpp cuda triton)
