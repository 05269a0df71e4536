// minmax_atomic.cu - extremum reductions finished with global atomics.
//
//   reduceMaxInt   : warp max via __shfl_xor_sync, one atomicMax per warp
//   reduceMinFloat : shared-memory fminf tree, one float atomic-min per block.
//                    There is no native float atomicMin, so it is emulated with
//                    an atomicCAS loop on the float's bit pattern.
//   argmaxPacked   : argmax as a single 64-bit atomicMax. The key packs an
//                    order-preserving encoding of the float in the high word and
//                    (0xFFFFFFFF - index) in the low word, so the largest key is
//                    the largest value and, among equal values, the lowest index.
//
// All three accumulate into an output the host initialises (INT_MIN, +FLT_MAX, 0).

#include <cstdio>
#include <cstdlib>
#include <climits>
#include <cfloat>
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

#define FULL_MASK   0xffffffffu
#define MIN_THREADS 256

// ---------------------------------------------------------------------------
// device helpers

__device__ __forceinline__ int warpReduceMax(int v)
{
    for (int offset = warpSize / 2; offset > 0; offset >>= 1) {
        v = max(v, __shfl_xor_sync(FULL_MASK, v, offset));
    }
    return v;   // every lane holds the warp maximum
}

__device__ float atomicMinFloat(float* addr, float value)
{
    int* addrAsInt = reinterpret_cast<int*>(addr);
    int old = *addrAsInt;
    int assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) <= value) {
            break;   // current minimum already smaller: nothing to do
        }
        old = atomicCAS(addrAsInt, assumed, __float_as_int(value));
    } while (assumed != old);
    return __int_as_float(old);
}

// Map a float to an unsigned int whose unsigned order matches the float order.
__host__ __device__ __forceinline__ unsigned int orderedFloatBits(unsigned int bits)
{
    return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

__device__ __forceinline__ unsigned long long warpReduceMaxU64(unsigned long long v)
{
    for (int offset = warpSize / 2; offset > 0; offset >>= 1) {
        const unsigned long long other = __shfl_down_sync(FULL_MASK, v, offset);
        v = (other > v) ? other : v;
    }
    return v;   // valid in lane 0
}

// ---------------------------------------------------------------------------
// kernels

__global__ void reduceMaxInt(const int* __restrict__ in, int* __restrict__ maxOut, int n)
{
    int local = INT_MIN;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        local = max(local, in[i]);
    }
    local = warpReduceMax(local);
    if ((threadIdx.x & (warpSize - 1)) == 0) {
        atomicMax(maxOut, local);
    }
}

__global__ void reduceMinFloat(const float* __restrict__ in, float* __restrict__ minOut, int n)
{
    __shared__ float smin[MIN_THREADS];

    const unsigned int tid = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + tid;
    smin[tid] = (i < n) ? in[i] : FLT_MAX;
    __syncthreads();

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            smin[tid] = fminf(smin[tid], smin[tid + s]);
        }
        __syncthreads();
    }

    if (tid == 0) {
        atomicMinFloat(minOut, smin[0]);
    }
}

__global__ void argmaxPacked(const float* __restrict__ in, unsigned long long* __restrict__ best, int n)
{
    unsigned long long key = 0ULL;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        const unsigned long long k =
            ((unsigned long long)orderedFloatBits(__float_as_uint(in[i])) << 32) |
            (unsigned long long)(0xFFFFFFFFu - (unsigned int)i);
        key = (k > key) ? k : key;
    }
    key = warpReduceMaxU64(key);
    if ((threadIdx.x % warpSize) == 0) {
        atomicMax(best, key);
    }
}

// ---------------------------------------------------------------------------

int main()
{
    const int n = 100003;
    std::vector<int> hInt(n);
    std::vector<float> hFloat(n);
    for (int i = 0; i < n; ++i) {
        hInt[i] = (int)((i * 7919L) % 200001) - 100000;
        hFloat[i] = 10.0f * (float)((i * 104729L) % 20001 - 10000) / 10000.0f;
    }

    int *dInt, *dMax;
    float *dFloat, *dMin;
    unsigned long long* dBest;
    CUDA_CHECK(cudaMalloc(&dInt, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dFloat, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dMax, sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dMin, sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dBest, sizeof(unsigned long long)));
    CUDA_CHECK(cudaMemcpy(dInt, hInt.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dFloat, hFloat.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    const int initMax = INT_MIN;
    const float initMin = FLT_MAX;
    const unsigned long long initBest = 0ULL;
    CUDA_CHECK(cudaMemcpy(dMax, &initMax, sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dMin, &initMin, sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dBest, &initBest, sizeof(unsigned long long), cudaMemcpyHostToDevice));

    reduceMaxInt<<<64, 256>>>(dInt, dMax, n);
    CUDA_CHECK(cudaGetLastError());
    reduceMinFloat<<<(n + MIN_THREADS - 1) / MIN_THREADS, MIN_THREADS>>>(dFloat, dMin, n);
    CUDA_CHECK(cudaGetLastError());
    argmaxPacked<<<50, 128>>>(dFloat, dBest, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    int hMax;
    float hMin;
    unsigned long long hBest;
    CUDA_CHECK(cudaMemcpy(&hMax, dMax, sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&hMin, dMin, sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&hBest, dBest, sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    const unsigned int argmax = 0xFFFFFFFFu - (unsigned int)(hBest & 0xFFFFFFFFull);
    printf("max int = %d, min float = %f, argmax = %u (value %f)\n",
           hMax, hMin, argmax, hFloat[argmax]);

    CUDA_CHECK(cudaFree(dInt));
    CUDA_CHECK(cudaFree(dFloat));
    CUDA_CHECK(cudaFree(dMax));
    CUDA_CHECK(cudaFree(dMin));
    CUDA_CHECK(cudaFree(dBest));
    return 0;
}
