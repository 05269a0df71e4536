// stencil1d.cu - symmetric 5-point (radius 2) smoothing filter on a 1-D signal.
//
//   out[i] = W0*in[i] + W1*(in[i-1] + in[i+1]) + W2*(in[i-2] + in[i+2])
//
// Samples outside [0, n) are taken as zero. Each 256-thread block stages its
// 256 samples plus a RADIUS-wide halo on either side in shared memory; the first
// RADIUS threads of the block load both halos.

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

#define RADIUS     2
#define BLOCK_SIZE 256

#define W0 0.4f
#define W1 0.2f
#define W2 0.1f

__device__ __forceinline__ float loadOrZero(const float* __restrict__ p, int i, int n)
{
    return (i >= 0 && i < n) ? p[i] : 0.0f;
}

__global__ void stencil1d5pt(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float s[BLOCK_SIZE + 2 * RADIUS];

    const int g = blockIdx.x * BLOCK_SIZE + threadIdx.x;   // global sample
    const int l = threadIdx.x + RADIUS;                    // position in the shared window

    s[l] = loadOrZero(in, g, n);
    if (threadIdx.x < RADIUS) {
        s[l - RADIUS]     = loadOrZero(in, g - RADIUS, n);       // left halo
        s[l + BLOCK_SIZE] = loadOrZero(in, g + BLOCK_SIZE, n);   // right halo
    }
    __syncthreads();

    if (g < n) {
        out[g] = W0 * s[l]
               + W1 * (s[l - 1] + s[l + 1])
               + W2 * (s[l - 2] + s[l + 2]);
    }
}

int main()
{
    const int n = 100000;
    std::vector<float> hIn(n), hOut(n);
    for (int i = 0; i < n; ++i) hIn[i] = 1.0f + sinf(0.01f * (float)i);

    float *dIn, *dOut;
    CUDA_CHECK(cudaMalloc(&dIn, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dOut, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dIn, hIn.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    const int blocks = (n + BLOCK_SIZE - 1) / BLOCK_SIZE;
    stencil1d5pt<<<blocks, BLOCK_SIZE>>>(dIn, dOut, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hOut.data(), dOut, n * sizeof(float), cudaMemcpyDeviceToHost));

    float maxErr = 0.0f;
    for (int i = 0; i < n; ++i) {
        float acc = 0.0f;
        const float w[2 * RADIUS + 1] = {W2, W1, W0, W1, W2};
        for (int k = -RADIUS; k <= RADIUS; ++k) {
            const int j = i + k;
            if (j >= 0 && j < n) acc += w[k + RADIUS] * hIn[j];
        }
        maxErr = fmaxf(maxErr, fabsf(acc - hOut[i]));
    }
    printf("stencil1d5pt max abs error %g\n", maxErr);

    CUDA_CHECK(cudaFree(dIn));
    CUDA_CHECK(cudaFree(dOut));
    return 0;
}
