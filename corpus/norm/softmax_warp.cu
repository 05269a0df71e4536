// Online softmax with one warp per row.
//
// Each lane walks its strided slice of the row keeping a running maximum m and
// a running denominator d = sum(exp(x - m)), rescaling d whenever m grows
// (Milakov & Gimelshein, "Online normalizer calculation for softmax").  The
// 32 partial (m, d) pairs are then merged with a butterfly of __shfl_xor_sync
// so that every lane ends up holding the row's (max, denominator).
#include <cuda_runtime.h>
#include <cfloat>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t err_ = (call);                                              \
        if (err_ != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error '%s' at %s:%d\n",                       \
                    cudaGetErrorString(err_), __FILE__, __LINE__);              \
            exit(EXIT_FAILURE);                                                 \
        }                                                                       \
    } while (0)

#define WARPS_PER_BLOCK 4
#define FULL_MASK 0xffffffffu

// Merge a partial (max, denom) pair into the running one.
__device__ __forceinline__ void online_merge(float& m, float& d, float m_other, float d_other)
{
    const float m_new = fmaxf(m, m_other);
    d = d * __expf(m - m_new) + d_other * __expf(m_other - m_new);
    m = m_new;
}

__global__ void softmax_online_warp(const float* __restrict__ x,
                                    float* __restrict__ y,
                                    int rows, int cols)
{
    const int lane = threadIdx.x % warpSize;
    const int warp = threadIdx.x / warpSize;
    const int row = blockIdx.x * WARPS_PER_BLOCK + warp;
    if (row >= rows) return;  // the whole warp leaves together

    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;

    // -FLT_MAX rather than -inf keeps exp(m - m_new) finite for idle lanes.
    float m = -FLT_MAX;
    float d = 0.0f;
    for (int c = lane; c < cols; c += warpSize) {
        const float v = xr[c];
        const float m_new = fmaxf(m, v);
        d = d * __expf(m - m_new) + __expf(v - m_new);
        m = m_new;
    }

    // Butterfly merge: after log2(32) steps every lane holds the full result.
    for (int offset = warpSize / 2; offset > 0; offset >>= 1) {
        const float m_other = __shfl_xor_sync(FULL_MASK, m, offset);
        const float d_other = __shfl_xor_sync(FULL_MASK, d, offset);
        online_merge(m, d, m_other, d_other);
    }

    const float inv_d = 1.0f / d;
    for (int c = lane; c < cols; c += warpSize)
        yr[c] = __expf(xr[c] - m) * inv_d;
}

int main()
{
    const int rows = 45;
    const int cols = 173;
    const size_t count = (size_t)rows * cols;

    std::vector<float> h_x(count), h_y(count);
    srand(7);
    for (auto& v : h_x) v = 10.0f * (rand() / (float)RAND_MAX) - 5.0f;

    float *d_x = nullptr, *d_y = nullptr;
    CUDA_CHECK(cudaMalloc(&d_x, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, count * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, h_x.data(), count * sizeof(float), cudaMemcpyHostToDevice));

    const int threads = WARPS_PER_BLOCK * 32;
    const int blocks = (rows + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
    softmax_online_warp<<<blocks, threads>>>(d_x, d_y, rows, cols);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_y.data(), d_y, count * sizeof(float), cudaMemcpyDeviceToHost));
    double s = 0.0;
    for (int c = 0; c < cols; ++c) s += h_y[c];
    printf("row 0 sums to %.6f\n", s);

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    return 0;
}
