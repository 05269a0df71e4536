// GEMV with one warp per matrix row: y[r] = dot(A[r, :], x) + bias[r].
//
// Lanes stride through the row (coalesced), then the 32 partial sums are
// folded with __shfl_down_sync; lane 0 holds the total.
#include <cuda_runtime.h>
#include <cmath>
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

#define THREADS_PER_BLOCK 256
#define WARP_SIZE 32

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

__global__ void gemv_warp_per_row(const float* __restrict__ A,
                                  const float* __restrict__ x,
                                  const float* __restrict__ bias,
                                  float* __restrict__ y,
                                  int rows, int cols)
{
    const int warps_per_block = blockDim.x / WARP_SIZE;
    const int warp_id = threadIdx.x / WARP_SIZE;
    const int lane = threadIdx.x % WARP_SIZE;
    const int row = blockIdx.x * warps_per_block + warp_id;
    if (row >= rows) return;

    const float* a_row = A + (size_t)row * cols;
    float partial = 0.0f;
    for (int c = lane; c < cols; c += WARP_SIZE)
        partial = fmaf(a_row[c], __ldg(&x[c]), partial);

    const float total = warp_sum(partial);
    if (lane == 0)
        y[row] = total + bias[row];
}

int main()
{
    const int rows = 200, cols = 300;
    std::vector<float> h_A((size_t)rows * cols), h_x(cols), h_b(rows), h_y(rows);
    srand(11);
    for (auto& v : h_A) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    for (auto& v : h_x) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    for (auto& v : h_b) v = rand() / (float)RAND_MAX;

    float *d_A, *d_x, *d_b, *d_y;
    CUDA_CHECK(cudaMalloc(&d_A, h_A.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_x, cols * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_b, rows * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, rows * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_A, h_A.data(), h_A.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_x, h_x.data(), cols * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, h_b.data(), rows * sizeof(float), cudaMemcpyHostToDevice));

    const int warps_per_block = THREADS_PER_BLOCK / WARP_SIZE;
    const int blocks = (rows + warps_per_block - 1) / warps_per_block;
    gemv_warp_per_row<<<blocks, THREADS_PER_BLOCK>>>(d_A, d_x, d_b, d_y, rows, cols);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h_y.data(), d_y, rows * sizeof(float), cudaMemcpyDeviceToHost));

    double max_err = 0.0;
    for (int r = 0; r < rows; ++r) {
        double ref = h_b[r];
        for (int c = 0; c < cols; ++c) ref += (double)h_A[(size_t)r * cols + c] * h_x[c];
        max_err = fmax(max_err, fabs(ref - h_y[r]));
    }
    printf("gemv_warp_per_row: max abs error %g\n", max_err);

    CUDA_CHECK(cudaFree(d_A));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_y));
    return 0;
}
