// Embedding lookup through the read-only data cache.
//
//   out[t, :] = scale * table[ids[t], :]      for 0 <= ids[t] < vocab
//   out[t, :] = 0                             otherwise (padding / unknown ids)
//
// The table and the token ids are read-only for the kernel's lifetime, so
// they are loaded with __ldg.  threadIdx.x runs along the embedding
// dimension, threadIdx.y along tokens.
#include <cuda_runtime.h>
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

#define DIM_THREADS 32
#define TOKEN_THREADS 8

__global__ void embedding_gather_ldg(const int* __restrict__ ids,
                                     const float* __restrict__ table,
                                     float* __restrict__ out,
                                     int num_tokens, int dim, int vocab, float scale)
{
    const int d = blockIdx.x * blockDim.x + threadIdx.x;
    const int t = blockIdx.y * blockDim.y + threadIdx.y;
    if (t >= num_tokens || d >= dim) return;

    const int id = __ldg(&ids[t]);
    float v = 0.0f;
    if (id >= 0 && id < vocab)
        v = scale * __ldg(&table[(size_t)id * dim + d]);
    out[(size_t)t * dim + d] = v;
}

int main()
{
    const int vocab = 64, dim = 70, num_tokens = 50;
    const float scale = 1.5f;
    std::vector<float> h_table((size_t)vocab * dim), h_out((size_t)num_tokens * dim);
    std::vector<int> h_ids(num_tokens);
    srand(1001);
    for (auto& v : h_table) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    for (auto& id : h_ids) id = rand() % (vocab + 4) - 2;   // a few out-of-range ids

    int* d_ids;
    float *d_table, *d_out;
    CUDA_CHECK(cudaMalloc(&d_ids, num_tokens * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_table, h_table.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, h_out.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_ids, h_ids.data(), num_tokens * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_table, h_table.data(), h_table.size() * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(DIM_THREADS, TOKEN_THREADS);
    dim3 grid((dim + DIM_THREADS - 1) / DIM_THREADS, (num_tokens + TOKEN_THREADS - 1) / TOKEN_THREADS);
    embedding_gather_ldg<<<grid, block>>>(d_ids, d_table, d_out, num_tokens, dim, vocab, scale);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h_out.data(), d_out, h_out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    printf("embedding: id %d -> out[0] = %f\n", h_ids[0], h_out[0]);

    CUDA_CHECK(cudaFree(d_ids));
    CUDA_CHECK(cudaFree(d_table));
    CUDA_CHECK(cudaFree(d_out));
    return 0;
}
