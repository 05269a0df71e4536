// vector_add_vec4.cu - vectorised c = a + b using 128-bit float4 loads/stores.
//
// Thread i handles floats [4i, 4i+4). When n is not a multiple of 4 the last
// (n % 4) floats are handled with scalar accesses by the first threads of the
// grid. cudaMalloc returns 256-byte aligned pointers, so the float4 casts are safe.

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

#define BLOCK_THREADS 256

__global__ void vectorAdd4(const float* __restrict__ a,
                           const float* __restrict__ b,
                           float* __restrict__ c,
                           int n)
{
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    const int numVec = n >> 2;          // whole float4 chunks

    if (idx < numVec) {
        const float4 va = reinterpret_cast<const float4*>(a)[idx];
        const float4 vb = reinterpret_cast<const float4*>(b)[idx];
        float4 vc;
        vc.x = va.x + vb.x;
        vc.y = va.y + vb.y;
        vc.z = va.z + vb.z;
        vc.w = va.w + vb.w;
        reinterpret_cast<float4*>(c)[idx] = vc;
    }

    // scalar tail: at most 3 leftover elements
    const int rem = n & 3;
    if (idx < rem) {
        const int t = (numVec << 2) + idx;
        c[t] = a[t] + b[t];
    }
}

int main()
{
    const int n = 100003;
    const size_t bytes = (size_t)n * sizeof(float);

    std::vector<float> hA(n), hB(n), hC(n);
    for (int i = 0; i < n; ++i) {
        hA[i] = sinf((float)i);
        hB[i] = cosf((float)i);
    }

    float *dA, *dB, *dC;
    CUDA_CHECK(cudaMalloc(&dA, bytes));
    CUDA_CHECK(cudaMalloc(&dB, bytes));
    CUDA_CHECK(cudaMalloc(&dC, bytes));
    CUDA_CHECK(cudaMemcpy(dA, hA.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, hB.data(), bytes, cudaMemcpyHostToDevice));

    // one thread per float4 chunk; n % 4 < BLOCK_THREADS so the tail threads exist
    const int numVec = n / 4;
    const int blocks = (numVec + BLOCK_THREADS - 1) / BLOCK_THREADS;
    vectorAdd4<<<blocks, BLOCK_THREADS>>>(dA, dB, dC, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hC.data(), dC, bytes, cudaMemcpyDeviceToHost));

    int bad = 0;
    for (int i = 0; i < n; ++i) {
        if (hC[i] != hA[i] + hB[i]) ++bad;
    }
    printf("vectorAdd4: %d mismatches (n = %d)\n", bad, n);

    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dC));
    return bad ? EXIT_FAILURE : EXIT_SUCCESS;
}
