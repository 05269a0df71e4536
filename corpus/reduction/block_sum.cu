// block_sum.cu - first pass of a two-pass sum: one partial sum per block.
//
// Each block reduces 2*BLOCK_SIZE consecutive inputs: every thread adds two
// elements while loading ("first add during load"), then the block runs a
// shared-memory tree with sequential addressing. The host sums the partials.

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

// BLOCK_SIZE must equal blockDim.x and be a power of two.
template <unsigned int BLOCK_SIZE>
__global__ void blockReduceSum(const float* __restrict__ in, float* __restrict__ partial, unsigned int n)
{
    __shared__ float sdata[BLOCK_SIZE];

    const unsigned int tid = threadIdx.x;
    const unsigned int i = blockIdx.x * (BLOCK_SIZE * 2) + tid;

    float sum = 0.0f;
    if (i < n) sum = in[i];
    if (i + BLOCK_SIZE < n) sum += in[i + BLOCK_SIZE];
    sdata[tid] = sum;
    __syncthreads();

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }

    if (tid == 0) {
        partial[blockIdx.x] = sdata[0];
    }
}

int main()
{
    const unsigned int n = 200000;
    const unsigned int threads = 256;
    const unsigned int elemsPerBlock = 2 * threads;
    const unsigned int blocks = (n + elemsPerBlock - 1) / elemsPerBlock;

    std::vector<float> hIn(n);
    double expected = 0.0;
    for (unsigned int i = 0; i < n; ++i) {
        hIn[i] = (float)(i % 100) * 0.01f;
        expected += hIn[i];
    }

    float *dIn, *dPartial;
    CUDA_CHECK(cudaMalloc(&dIn, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dPartial, blocks * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dIn, hIn.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    blockReduceSum<256><<<blocks, threads>>>(dIn, dPartial, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> hPartial(blocks);
    CUDA_CHECK(cudaMemcpy(hPartial.data(), dPartial, blocks * sizeof(float), cudaMemcpyDeviceToHost));
    double total = 0.0;
    for (unsigned int b = 0; b < blocks; ++b) total += hPartial[b];
    printf("sum = %.3f (expected %.3f) from %u partials\n", total, expected, blocks);

    CUDA_CHECK(cudaFree(dIn));
    CUDA_CHECK(cudaFree(dPartial));
    return 0;
}
