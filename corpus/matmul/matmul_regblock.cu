// Register-blocked SGEMM: C = A * B, row-major, C is M x N.
//
// A 16x16 thread block computes a 64x64 tile of C.  Per k-step it stages a
// 64x16 slab of A and a 16x64 slab of B in shared memory; each thread then
// accumulates a 4x4 micro-tile in registers.  The micro-tile is strided
// (rows ty + 16*i, columns tx + 16*j) so that shared-memory reads of B and the
// final global stores stay contiguous across a warp.
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

#define BM 64
#define BN 64
#define BK 16
#define TM 4            // micro-tile rows per thread
#define TN 4            // micro-tile cols per thread
#define THREADS_X (BN / TN)
#define THREADS_Y (BM / TM)

__global__ void matmul_regblock_4x4(const float* __restrict__ A,
                                    const float* __restrict__ B,
                                    float* __restrict__ C,
                                    int M, int N, int K)
{
    __shared__ float As[BM][BK];
    __shared__ float Bs[BK][BN];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int tid = ty * THREADS_X + tx;
    const int nthreads = THREADS_X * THREADS_Y;
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        // Cooperative, bounds-checked loads of both slabs.
        for (int e = tid; e < BM * BK; e += nthreads) {
            const int r = e / BK, c = e % BK;
            const int gr = row0 + r, gc = k0 + c;
            As[r][c] = (gr < M && gc < K) ? A[(size_t)gr * K + gc] : 0.0f;
        }
        for (int e = tid; e < BK * BN; e += nthreads) {
            const int r = e / BN, c = e % BN;
            const int gr = k0 + r, gc = col0 + c;
            Bs[r][c] = (gr < K && gc < N) ? B[(size_t)gr * N + gc] : 0.0f;
        }
        __syncthreads();

#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float a_frag[TM], b_frag[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) a_frag[i] = As[ty + THREADS_Y * i][kk];
#pragma unroll
            for (int j = 0; j < TN; ++j) b_frag[j] = Bs[kk][tx + THREADS_X * j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] = fmaf(a_frag[i], b_frag[j], acc[i][j]);
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = row0 + ty + THREADS_Y * i;
        if (r >= M) continue;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int c = col0 + tx + THREADS_X * j;
            if (c < N) C[(size_t)r * N + c] = acc[i][j];
        }
    }
}

int main()
{
    const int M = 130, N = 100, K = 70;
    std::vector<float> h_A((size_t)M * K), h_B((size_t)K * N), h_C((size_t)M * N);
    srand(17);
    for (auto& v : h_A) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    for (auto& v : h_B) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;

    float *d_A, *d_B, *d_C;
    CUDA_CHECK(cudaMalloc(&d_A, h_A.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_B, h_B.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_C, h_C.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_A, h_A.data(), h_A.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_B, h_B.data(), h_B.size() * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(THREADS_X, THREADS_Y);
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    matmul_regblock_4x4<<<grid, block>>>(d_A, d_B, d_C, M, N, K);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h_C.data(), d_C, h_C.size() * sizeof(float), cudaMemcpyDeviceToHost));

    double max_err = 0.0;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double ref = 0.0;
            for (int k = 0; k < K; ++k) ref += (double)h_A[(size_t)i * K + k] * h_B[(size_t)k * N + j];
            max_err = fmax(max_err, fabs(ref - h_C[(size_t)i * N + j]));
        }
    printf("matmul_regblock_4x4: max abs error %g\n", max_err);

    CUDA_CHECK(cudaFree(d_A));
    CUDA_CHECK(cudaFree(d_B));
    CUDA_CHECK(cudaFree(d_C));
    return 0;
}
