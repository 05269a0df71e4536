// Single-head scaled dot-product attention, forward pass, for short sequences:
//
//   S = Q K^T * scale          Q: [Lq, D], K: [Lk, D]
//   P = softmax(S) row-wise    (optionally causal: key j is masked for j > i)
//   O = P V                    V: [Lk, D], O: [Lq, D]
//
// One thread block per query row.  The query row and the row of scores live in
// shared memory, so Lk <= MAX_SEQ and D <= MAX_HEAD_DIM.
#include <cuda_runtime.h>
#include <cfloat>
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

#define MAX_SEQ 128
#define MAX_HEAD_DIM 64
#define ATTN_THREADS 128

__global__ void attention_row_forward(const float* __restrict__ Q,
                                      const float* __restrict__ K,
                                      const float* __restrict__ V,
                                      float* __restrict__ O,
                                      int Lq, int Lk, int D,
                                      float scale, int causal)
{
    __shared__ float s_q[MAX_HEAD_DIM];
    __shared__ float s_p[MAX_SEQ];
    __shared__ float s_red[ATTN_THREADS];

    const int i = blockIdx.x;   // query row
    const int tid = threadIdx.x;
    if (i >= Lq) return;

    for (int d = tid; d < D; d += blockDim.x)
        s_q[d] = Q[(size_t)i * D + d];
    __syncthreads();

    // Scores for this query against every key.
    float local_max = -FLT_MAX;
    for (int j = tid; j < Lk; j += blockDim.x) {
        float s;
        if (causal && j > i) {
            s = -INFINITY;
        } else {
            const float* k_row = K + (size_t)j * D;
            float dot = 0.0f;
            for (int d = 0; d < D; ++d)
                dot = fmaf(s_q[d], k_row[d], dot);
            s = dot * scale;
        }
        s_p[j] = s;
        local_max = fmaxf(local_max, s);
    }
    s_red[tid] = local_max;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s_red[tid] = fmaxf(s_red[tid], s_red[tid + stride]);
        __syncthreads();
    }
    const float row_max = s_red[0];
    __syncthreads();

    // Unnormalised probabilities (masked entries become exp(-inf) = 0).
    float local_sum = 0.0f;
    for (int j = tid; j < Lk; j += blockDim.x) {
        const float p = expf(s_p[j] - row_max);
        s_p[j] = p;
        local_sum += p;
    }
    s_red[tid] = local_sum;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s_red[tid] += s_red[tid + stride];
        __syncthreads();
    }
    const float inv_sum = 1.0f / s_red[0];

    // O[i, d] = sum_j P[j] V[j, d] / sum
    for (int d = tid; d < D; d += blockDim.x) {
        float acc = 0.0f;
        for (int j = 0; j < Lk; ++j)
            acc = fmaf(s_p[j], V[(size_t)j * D + d], acc);
        O[(size_t)i * D + d] = acc * inv_sum;
    }
}

static void run_attention(int Lq, int Lk, int D, int causal)
{
    std::vector<float> h_q((size_t)Lq * D), h_k((size_t)Lk * D), h_v((size_t)Lk * D), h_o((size_t)Lq * D);
    for (auto& v : h_q) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    for (auto& v : h_k) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    for (auto& v : h_v) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;

    float *d_q, *d_k, *d_v, *d_o;
    CUDA_CHECK(cudaMalloc(&d_q, h_q.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_k, h_k.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_v, h_v.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_o, h_o.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_q, h_q.data(), h_q.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_k, h_k.data(), h_k.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_v, h_v.data(), h_v.size() * sizeof(float), cudaMemcpyHostToDevice));

    const float scale = 1.0f / sqrtf((float)D);
    attention_row_forward<<<Lq, ATTN_THREADS>>>(d_q, d_k, d_v, d_o, Lq, Lk, D, scale, causal);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h_o.data(), d_o, h_o.size() * sizeof(float), cudaMemcpyDeviceToHost));
    printf("attention Lq=%d Lk=%d D=%d causal=%d: O[0] = %f\n", Lq, Lk, D, causal, h_o[0]);

    CUDA_CHECK(cudaFree(d_q));
    CUDA_CHECK(cudaFree(d_k));
    CUDA_CHECK(cudaFree(d_v));
    CUDA_CHECK(cudaFree(d_o));
}

int main()
{
    srand(77);
    run_attention(57, 100, 48, 0);   // cross-attention shape
    run_attention(96, 96, 64, 1);    // causal self-attention
    return 0;
}
