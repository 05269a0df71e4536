// RMSNorm, as used in LLaMA-style transformers:
//
//   y = x * rsqrt(mean(x^2) + eps) * weight
//
// rmsnorm_forward: one block per row, shared-memory tree reduction.
// fused_add_rmsnorm: one warp per row; first adds the sub-layer output to the
// residual stream (updated in place), then normalises the new residual.
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

#define RMS_BLOCK 64
#define ROWS_PER_BLOCK 4   // warps per block in the fused kernel

__global__ void rmsnorm_forward(const float* __restrict__ x,
                                const float* __restrict__ weight,
                                float* __restrict__ y,
                                int rows, int hidden, float eps)
{
    __shared__ float s_sq[RMS_BLOCK];
    const int row = blockIdx.x;
    const int tid = threadIdx.x;
    if (row >= rows) return;

    const float* xr = x + (size_t)row * hidden;
    float acc = 0.0f;
    for (int i = tid; i < hidden; i += blockDim.x)
        acc = fmaf(xr[i], xr[i], acc);
    s_sq[tid] = acc;
    __syncthreads();

    for (int stride = RMS_BLOCK / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s_sq[tid] += s_sq[tid + stride];
        __syncthreads();
    }
    const float inv_rms = rsqrtf(s_sq[0] / (float)hidden + eps);

    float* yr = y + (size_t)row * hidden;
    for (int i = tid; i < hidden; i += blockDim.x)
        yr[i] = xr[i] * inv_rms * weight[i];
}

__global__ void fused_add_rmsnorm(const float* __restrict__ x,
                                  float* __restrict__ residual,
                                  const float* __restrict__ weight,
                                  float* __restrict__ y,
                                  int rows, int hidden, float eps)
{
    const int lane = threadIdx.x & 31;
    const int row = blockIdx.x * ROWS_PER_BLOCK + (threadIdx.x >> 5);
    if (row >= rows) return;

    const size_t base = (size_t)row * hidden;
    float acc = 0.0f;
    for (int i = lane; i < hidden; i += 32) {
        const float h = x[base + i] + residual[base + i];
        residual[base + i] = h;
        acc = fmaf(h, h, acc);
    }
    for (int offset = 16; offset > 0; offset >>= 1)
        acc += __shfl_xor_sync(0xffffffffu, acc, offset);

    const float inv_rms = rsqrtf(acc / (float)hidden + eps);
    // Each lane re-reads only the residual entries it wrote itself.
    for (int i = lane; i < hidden; i += 32)
        y[base + i] = residual[base + i] * inv_rms * weight[i];
}

static void fill_uniform(std::vector<float>& v, float lo, float hi)
{
    for (auto& e : v) e = lo + (hi - lo) * (rand() / (float)RAND_MAX);
}

int main()
{
    const float eps = 1e-6f;

    // --- plain RMSNorm ---
    const int rows_a = 33, hidden_a = 200;
    std::vector<float> h_x(rows_a * hidden_a), h_w(hidden_a), h_y(rows_a * hidden_a);
    srand(99);
    fill_uniform(h_x, -3.0f, 3.0f);
    fill_uniform(h_w, 0.8f, 1.2f);

    float *d_x, *d_w, *d_y;
    CUDA_CHECK(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_w, h_w.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, h_y.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_w, h_w.data(), h_w.size() * sizeof(float), cudaMemcpyHostToDevice));

    rmsnorm_forward<<<rows_a, RMS_BLOCK>>>(d_x, d_w, d_y, rows_a, hidden_a, eps);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(h_y.data(), d_y, h_y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    printf("rmsnorm_forward: y[0] = %f\n", h_y[0]);

    // --- residual add + RMSNorm ---
    const int rows_b = 50, hidden_b = 96;
    const size_t nb = (size_t)rows_b * hidden_b;
    std::vector<float> h_xb(nb), h_res(nb), h_wb(hidden_b), h_yb(nb);
    fill_uniform(h_xb, -1.0f, 1.0f);
    fill_uniform(h_res, -2.0f, 2.0f);
    fill_uniform(h_wb, 0.8f, 1.2f);

    float *d_xb, *d_res, *d_wb, *d_yb;
    CUDA_CHECK(cudaMalloc(&d_xb, nb * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_res, nb * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_wb, hidden_b * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_yb, nb * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_xb, h_xb.data(), nb * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_res, h_res.data(), nb * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_wb, h_wb.data(), hidden_b * sizeof(float), cudaMemcpyHostToDevice));

    const int blocks = (rows_b + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
    fused_add_rmsnorm<<<blocks, ROWS_PER_BLOCK * 32>>>(d_xb, d_res, d_wb, d_yb, rows_b, hidden_b, eps);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h_yb.data(), d_yb, nb * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_res.data(), d_res, nb * sizeof(float), cudaMemcpyDeviceToHost));
    printf("fused_add_rmsnorm: y[0] = %f residual[0] = %f\n", h_yb[0], h_res[0]);

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_w));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_xb));
    CUDA_CHECK(cudaFree(d_res));
    CUDA_CHECK(cudaFree(d_wb));
    CUDA_CHECK(cudaFree(d_yb));
    return 0;
}
