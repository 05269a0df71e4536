// Row reductions written with cooperative groups.
//
//   cg_row_dot:       out[r] = dot(a[r, :], b[r, :]); one block per row, each
//                     32-thread tile reduces with cg::reduce, then tile leaders
//                     combine through shared memory.
//   cg_tile_row_norm: out[r] = ||x[r, :]||_2; one 32-thread tile per row, tree
//                     reduction with tile.shfl_down.
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace cg = cooperative_groups;

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t err_ = (call);                                              \
        if (err_ != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error '%s' at %s:%d\n",                       \
                    cudaGetErrorString(err_), __FILE__, __LINE__);              \
            exit(EXIT_FAILURE);                                                 \
        }                                                                       \
    } while (0)

#define DOT_THREADS 128
#define TILE_SIZE 32
#define TILES_PER_BLOCK 4

__global__ void cg_row_dot(const float* __restrict__ a,
                           const float* __restrict__ b,
                           float* __restrict__ out,
                           int rows, int cols)
{
    __shared__ float s_tile_sums[DOT_THREADS / TILE_SIZE];

    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<TILE_SIZE> tile = cg::tiled_partition<TILE_SIZE>(block);

    const int row = blockIdx.x;
    if (row >= rows) return;
    const size_t base = (size_t)row * cols;

    float partial = 0.0f;
    for (int c = block.thread_rank(); c < cols; c += block.size())
        partial = fmaf(a[base + c], b[base + c], partial);

    const float tile_sum = cg::reduce(tile, partial, cg::plus<float>());
    if (tile.thread_rank() == 0)
        s_tile_sums[tile.meta_group_rank()] = tile_sum;
    block.sync();

    if (tile.meta_group_rank() == 0) {
        const unsigned num_tiles = tile.meta_group_size();
        float v = tile.thread_rank() < num_tiles ? s_tile_sums[tile.thread_rank()] : 0.0f;
        v = cg::reduce(tile, v, cg::plus<float>());
        if (tile.thread_rank() == 0)
            out[row] = v;
    }
}

__global__ void cg_tile_row_norm(const float* __restrict__ x,
                                 float* __restrict__ out,
                                 int rows, int cols)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<TILE_SIZE> tile = cg::tiled_partition<TILE_SIZE>(block);

    const int row = blockIdx.x * TILES_PER_BLOCK + tile.meta_group_rank();
    if (row >= rows) return;   // the whole tile leaves together

    const float* xr = x + (size_t)row * cols;
    float sq = 0.0f;
    for (int c = tile.thread_rank(); c < cols; c += tile.size())
        sq = fmaf(xr[c], xr[c], sq);

    for (int offset = tile.size() / 2; offset > 0; offset /= 2)
        sq += tile.shfl_down(sq, offset);

    if (tile.thread_rank() == 0)
        out[row] = sqrtf(sq);
}

int main()
{
    srand(808);

    const int rows = 48, cols = 333;
    std::vector<float> h_a((size_t)rows * cols), h_b((size_t)rows * cols), h_dot(rows);
    for (auto& v : h_a) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    for (auto& v : h_b) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    float *d_a, *d_b, *d_dot;
    CUDA_CHECK(cudaMalloc(&d_a, h_a.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_b, h_b.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_dot, rows * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_a, h_a.data(), h_a.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, h_b.data(), h_b.size() * sizeof(float), cudaMemcpyHostToDevice));
    cg_row_dot<<<rows, DOT_THREADS>>>(d_a, d_b, d_dot, rows, cols);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(h_dot.data(), d_dot, rows * sizeof(float), cudaMemcpyDeviceToHost));
    printf("cg_row_dot: out[0] = %f\n", h_dot[0]);

    const int nrows = 70, ncols = 90;
    std::vector<float> h_x((size_t)nrows * ncols), h_norm(nrows);
    for (auto& v : h_x) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    float *d_x, *d_norm;
    CUDA_CHECK(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_norm, nrows * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    const int blocks = (nrows + TILES_PER_BLOCK - 1) / TILES_PER_BLOCK;
    cg_tile_row_norm<<<blocks, TILES_PER_BLOCK * TILE_SIZE>>>(d_x, d_norm, nrows, ncols);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h_norm.data(), d_norm, nrows * sizeof(float), cudaMemcpyDeviceToHost));
    printf("cg_tile_row_norm: out[0] = %f\n", h_norm[0]);

    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_dot));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_norm));
    return 0;
}
