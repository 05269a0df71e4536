"""Runtime: runs original CUDA and migrated TileLang kernels and compares them (no libclang needed)."""
