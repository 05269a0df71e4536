// Batched GEMM with a transposed right operand, as in attention score
// computation:  C[b] = alpha * A[b] * B[b]^T
//
//   A: [batch, M, K]   B: [batch, N, K]   C: [batch, M, N]   (all row-major)
//
// blockIdx.z selects the batch.  Both operands are read along K, so both tile
// loads are coalesced; the B tile is stored as Bs[n][k] with one column of
// padding to avoid shared-memory bank conflicts in the inner product.
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

#define TILE 16

__global__ void bmm_nt(const float* __restrict__ A,
                       const float* __restrict__ B,
                       float* __restrict__ C,
                       int M, int N, int K, float alpha)
{
    __shared__ float As[TILE][TILE + 1];
    __shared__ float Bs[TILE][TILE + 1];

    const int batch = blockIdx.z;
    const float* Ab = A + (size_t)batch * M * K;
    const float* Bb = B + (size_t)batch * N * K;
    float* Cb = C + (size_t)batch * M * N;

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;       // row of C (and of A)
    const int col = blockIdx.x * TILE + tx;       // column of C
    const int b_row = blockIdx.x * TILE + ty;     // row of B this thread loads

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        const int k = k0 + tx;
        As[ty][tx] = (row < M && k < K) ? Ab[(size_t)row * K + k] : 0.0f;
        Bs[ty][tx] = (b_row < N && k < K) ? Bb[(size_t)b_row * K + k] : 0.0f;
        __syncthreads();

        for (int kk = 0; kk < TILE; ++kk)
            acc += As[ty][kk] * Bs[tx][kk];
        __syncthreads();
    }

    if (row < M && col < N)
        Cb[(size_t)row * N + col] = alpha * acc;
}

int main()
{
    const int batch = 3, M = 40, N = 50, K = 36;
    const float alpha = 1.0f / sqrtf((float)K);
    std::vector<float> h_A((size_t)batch * M * K), h_B((size_t)batch * N * K), h_C((size_t)batch * M * N);
    srand(8);
    for (auto& v : h_A) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    for (auto& v : h_B) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;

    float *d_A, *d_B, *d_C;
    CUDA_CHECK(cudaMalloc(&d_A, h_A.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_B, h_B.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_C, h_C.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_A, h_A.data(), h_A.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_B, h_B.data(), h_B.size() * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE, batch);
    bmm_nt<<<grid, block>>>(d_A, d_B, d_C, M, N, K, alpha);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h_C.data(), d_C, h_C.size() * sizeof(float), cudaMemcpyDeviceToHost));
    printf("bmm_nt: C[0] = %f, C[last] = %f\n", h_C[0], h_C.back());

    CUDA_CHECK(cudaFree(d_A));
    CUDA_CHECK(cudaFree(d_B));
    CUDA_CHECK(cudaFree(d_C));
    return 0;
}
