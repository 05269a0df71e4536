// warp_reduce_sum.cu - single-pass sum using warp shuffles and one atomic per block.
//
//   1. each thread accumulates a grid-stride slice of the input in a register
//   2. each warp reduces its 32 values with __shfl_down_sync
//   3. lane 0 of every warp parks the warp sum in shared memory
//   4. warp 0 reduces the warp sums and lane 0 atomically adds the block total
//
// The result is accumulated into *result, which the caller initialises.

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

#define FULL_MASK 0xffffffffu
#define MAX_WARPS_PER_BLOCK 32
#define REDUCE_THREADS 512
#define REDUCE_BLOCKS  120

__device__ __forceinline__ float warpReduceSum(float v)
{
    for (int offset = warpSize / 2; offset > 0; offset >>= 1) {
        v += __shfl_down_sync(FULL_MASK, v, offset);
    }
    return v;
}

__global__ void reduceSumAtomic(const float* __restrict__ in, float* __restrict__ result, size_t n)
{
    __shared__ float warpSums[MAX_WARPS_PER_BLOCK];

    float sum = 0.0f;
    const size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        sum += in[i];
    }

    const int lane = threadIdx.x % warpSize;
    const int warp = threadIdx.x / warpSize;

    sum = warpReduceSum(sum);
    if (lane == 0) {
        warpSums[warp] = sum;
    }
    __syncthreads();

    const int numWarps = (blockDim.x + warpSize - 1) / warpSize;
    if (warp == 0) {
        sum = (lane < numWarps) ? warpSums[lane] : 0.0f;
        sum = warpReduceSum(sum);
        if (lane == 0) {
            atomicAdd(result, sum);
        }
    }
}

int main()
{
    const size_t n = 500000;
    std::vector<float> hIn(n);
    double expected = 0.0;
    for (size_t i = 0; i < n; ++i) {
        hIn[i] = (float)((i * 13) % 1000) / 1000.0f - 0.5f;
        expected += hIn[i];
    }

    float *dIn, *dResult;
    CUDA_CHECK(cudaMalloc(&dIn, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dResult, sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dIn, hIn.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dResult, 0, sizeof(float)));

    reduceSumAtomic<<<REDUCE_BLOCKS, REDUCE_THREADS>>>(dIn, dResult, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    float result = 0.0f;
    CUDA_CHECK(cudaMemcpy(&result, dResult, sizeof(float), cudaMemcpyDeviceToHost));
    printf("sum = %f (expected %f)\n", result, expected);

    CUDA_CHECK(cudaFree(dIn));
    CUDA_CHECK(cudaFree(dResult));
    return 0;
}
