"""cuda2tile: migrate CUDA C++ kernels to TileLang."""
__version__ = "0.1.0"
