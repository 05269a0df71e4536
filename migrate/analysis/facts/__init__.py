"""Questions about the model that several passes ask, answered without rewriting it: affine
forms of indices, what differs between threads, elements and blocks, bounds, disjoint stores,
locals with one value, the device functions a kernel calls, what its launch sites say."""
