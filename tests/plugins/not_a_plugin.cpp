// A shared library without the NATIVE_OPS_PLUGIN entry points.
extern "C" int not_a_native_ops_plugin() { return 0; }
