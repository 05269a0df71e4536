// dot_product.cu - two-pass dot product.
//
//   dotPartial  : each block accumulates a grid-stride slice of x[i]*y[i] and
//                 reduces it in shared memory to one partial per block
//   sumPartials : a single block folds the partials into result[0]

#include <cstdio>
#include <cstdlib>
#include <cmath>
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

#define DOT_THREADS 256   // both kernels assume blockDim.x == DOT_THREADS
#define DOT_BLOCKS  128

__device__ __forceinline__ float blockTreeSum(float* cache, float v)
{
    const unsigned int tid = threadIdx.x;
    cache[tid] = v;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            cache[tid] += cache[tid + s];
        }
        __syncthreads();
    }
    return cache[0];
}

__global__ void dotPartial(const float* __restrict__ x,
                           const float* __restrict__ y,
                           float* __restrict__ partial,
                           int n)
{
    __shared__ float cache[DOT_THREADS];

    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        acc += x[i] * y[i];
    }

    const float blockSum = blockTreeSum(cache, acc);
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = blockSum;
    }
}

__global__ void sumPartials(const float* __restrict__ partial, float* __restrict__ result, int count)
{
    __shared__ float cache[DOT_THREADS];

    float acc = 0.0f;
    for (int i = threadIdx.x; i < count; i += blockDim.x) {
        acc += partial[i];
    }

    const float total = blockTreeSum(cache, acc);
    if (threadIdx.x == 0) {
        result[0] = total;
    }
}

int main()
{
    const int n = 300000;
    std::vector<float> hx(n), hy(n);
    double expected = 0.0;
    for (int i = 0; i < n; ++i) {
        hx[i] = (float)(i % 17) / 17.0f;
        hy[i] = (float)(i % 23) / 23.0f;
        expected += (double)hx[i] * hy[i];
    }

    float *dx, *dy, *dPartial, *dResult;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dPartial, DOT_BLOCKS * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dResult, sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dy, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    dotPartial<<<DOT_BLOCKS, DOT_THREADS>>>(dx, dy, dPartial, n);
    CUDA_CHECK(cudaGetLastError());
    sumPartials<<<1, DOT_THREADS>>>(dPartial, dResult, DOT_BLOCKS);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    float result = 0.0f;
    CUDA_CHECK(cudaMemcpy(&result, dResult, sizeof(float), cudaMemcpyDeviceToHost));
    printf("dot = %f (expected %f, rel err %g)\n", result, expected,
           fabs(result - expected) / fabs(expected));

    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
    CUDA_CHECK(cudaFree(dPartial));
    CUDA_CHECK(cudaFree(dResult));
    return 0;
}
