# C-level kernels only (cimported by runtime._executor); nothing is callable from Python.
