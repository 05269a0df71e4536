// Mixed-precision GEMM: half inputs, float accumulation, half output.
//
//   C = half(alpha * A * B)      A: [M x K], B: [K x N], C: [M x N], row-major
//
// 16x16 tiles of A and B are staged in shared memory as __half (half the
// shared-memory footprint of float tiles) and widened to float in the
// inner product.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
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

#define TILE 16

__global__ void hgemm_f32acc(const __half* __restrict__ A,
                             const __half* __restrict__ B,
                             __half* __restrict__ C,
                             int M, int N, int K, float alpha)
{
    __shared__ __half As[TILE][TILE];
    __shared__ __half Bs[TILE][TILE];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    const __half zero = __float2half(0.0f);

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : zero;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : zero;
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc = fmaf(__half2float(As[ty][k]), __half2float(Bs[k][tx]), acc);
        __syncthreads();
    }
    if (row < M && col < N)
        C[(size_t)row * N + col] = __float2half_rn(alpha * acc);
}

int main()
{
    const int M = 70, N = 60, K = 50;
    const float alpha = 0.5f;
    std::vector<__half> h_A((size_t)M * K), h_B((size_t)K * N), h_C((size_t)M * N);
    srand(64);
    for (auto& v : h_A) v = __float2half(2.0f * rand() / (float)RAND_MAX - 1.0f);
    for (auto& v : h_B) v = __float2half(2.0f * rand() / (float)RAND_MAX - 1.0f);

    __half *d_A, *d_B, *d_C;
    CUDA_CHECK(cudaMalloc(&d_A, h_A.size() * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&d_B, h_B.size() * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&d_C, h_C.size() * sizeof(__half)));
    CUDA_CHECK(cudaMemcpy(d_A, h_A.data(), h_A.size() * sizeof(__half), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_B, h_B.data(), h_B.size() * sizeof(__half), cudaMemcpyHostToDevice));

    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    hgemm_f32acc<<<grid, block>>>(d_A, d_B, d_C, M, N, K, alpha);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h_C.data(), d_C, h_C.size() * sizeof(__half), cudaMemcpyDeviceToHost));
    printf("hgemm_f32acc: C[0] = %f\n", __half2float(h_C[0]));

    CUDA_CHECK(cudaFree(d_A));
    CUDA_CHECK(cudaFree(d_B));
    CUDA_CHECK(cudaFree(d_C));
    return 0;
}
