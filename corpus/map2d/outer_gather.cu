// outer_gather.cu - two 2-D index-mapping kernels.
//
//   outerProduct : out[r][c] = alpha * x[r] * y[c]            (rank-1 update without the +=)
//   gatherRows   : out[r][:] = table[rowIdx[r]][:]             (embedding lookup)

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

#define OUTER_BLOCK 16
#define GATHER_BLOCK_X 32
#define GATHER_BLOCK_Y 8

__global__ void outerProduct(const float* __restrict__ x,
                             const float* __restrict__ y,
                             float* __restrict__ out,
                             int m, int n, float alpha)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < m && c < n) {
        out[(size_t)r * n + c] = alpha * x[r] * y[c];
    }
}

__global__ void gatherRows(const float* __restrict__ table,
                           const int* __restrict__ rowIdx,
                           float* __restrict__ out,
                           int numIdx, int dim)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;   // feature
    const int r = blockIdx.y * blockDim.y + threadIdx.y;   // output row
    if (r < numIdx && c < dim) {
        const int src = rowIdx[r];
        out[(size_t)r * dim + c] = table[(size_t)src * dim + c];
    }
}

int main()
{
    // ---- outer product ----------------------------------------------------
    const int m = 250, n = 333;
    std::vector<float> hx(m), hy(n);
    for (int i = 0; i < m; ++i) hx[i] = 0.01f * (float)i;
    for (int j = 0; j < n; ++j) hy[j] = 1.0f - 0.002f * (float)j;

    float *dx, *dy, *dOuter;
    CUDA_CHECK(cudaMalloc(&dx, m * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dOuter, (size_t)m * n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, hx.data(), m * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dy, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    dim3 oBlock(OUTER_BLOCK, OUTER_BLOCK);
    dim3 oGrid((n + OUTER_BLOCK - 1) / OUTER_BLOCK, (m + OUTER_BLOCK - 1) / OUTER_BLOCK);
    outerProduct<<<oGrid, oBlock>>>(dx, dy, dOuter, m, n, 2.0f);
    CUDA_CHECK(cudaGetLastError());

    // ---- embedding gather -------------------------------------------------
    const int vocab = 500, dim = 100, numIdx = 1001;
    std::vector<float> hTable((size_t)vocab * dim);
    std::vector<int> hIdx(numIdx);
    for (size_t i = 0; i < hTable.size(); ++i) hTable[i] = (float)(i % 1000) * 1e-3f;
    for (int i = 0; i < numIdx; ++i) hIdx[i] = (i * 37) % vocab;

    float *dTable, *dGathered;
    int* dIdx;
    CUDA_CHECK(cudaMalloc(&dTable, hTable.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dIdx, numIdx * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dGathered, (size_t)numIdx * dim * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dTable, hTable.data(), hTable.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dIdx, hIdx.data(), numIdx * sizeof(int), cudaMemcpyHostToDevice));

    dim3 gBlock(GATHER_BLOCK_X, GATHER_BLOCK_Y);
    dim3 gGrid((dim + GATHER_BLOCK_X - 1) / GATHER_BLOCK_X, (numIdx + GATHER_BLOCK_Y - 1) / GATHER_BLOCK_Y);
    gatherRows<<<gGrid, gBlock>>>(dTable, dIdx, dGathered, numIdx, dim);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> hGathered((size_t)numIdx * dim);
    CUDA_CHECK(cudaMemcpy(hGathered.data(), dGathered, hGathered.size() * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int r = 0; r < numIdx; ++r)
        for (int c = 0; c < dim; ++c)
            bad += hGathered[(size_t)r * dim + c] != hTable[(size_t)hIdx[r] * dim + c];
    printf("gatherRows mismatches: %d\n", bad);

    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
    CUDA_CHECK(cudaFree(dOuter));
    CUDA_CHECK(cudaFree(dTable));
    CUDA_CHECK(cudaFree(dIdx));
    CUDA_CHECK(cudaFree(dGathered));
    return bad ? EXIT_FAILURE : EXIT_SUCCESS;
}
