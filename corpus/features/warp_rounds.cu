// warp_rounds.cu - a per-warp number of butterfly rounds.
//
// Warp w of a block runs (w % 3) + 1 rounds of xor-shuffle butterflies over its lanes: after
// round k every lane holds the sum of its 2^(k+1)-lane group. The round count is the same for
// all lanes of a warp (so the shuffles are legal) but differs between warps, which makes the
// loop's trip count depend on the thread: a kernel for thread-level (simt) TileLang.

#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t err_ = (call);                                              \
        if (err_ != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error '%s' at %s:%d\n",                       \
                    cudaGetErrorString(err_), __FILE__, __LINE__);              \
            exit(EXIT_FAILURE);                                                 \
        }                                                                       \
    } while (0)

#define FULL_MASK 0xffffffffu

__global__ void warp_rounds(const float* __restrict__ x, float* __restrict__ y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < n) ? x[i] : 0.0f;            // lanes past n still take part in the shuffles
    const int rounds = (threadIdx.x / warpSize) % 3 + 1;
    for (int k = 0; k < rounds; ++k)
        v += __shfl_xor_sync(FULL_MASK, v, 1 << k);
    if (i < n) y[i] = v;
}

int main()
{
    const int n = 350;
    const int threads = 96;                      // three warps: 1, 2 and 3 rounds
    const int blocks = (n + threads - 1) / threads;
    std::vector<float> hx(n), hy(n);
    for (int i = 0; i < n; ++i) hx[i] = (float)(i % 7) - 3.0f;

    float *dx = nullptr, *dy = nullptr;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    warp_rounds<<<blocks, threads>>>(dx, dy, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(hy.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    printf("y[0..3] = %g %g %g %g\n", hy[0], hy[1], hy[2], hy[3]);
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
    return 0;
}
