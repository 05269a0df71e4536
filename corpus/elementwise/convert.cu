// convert.cu - float <-> integer conversion kernels used around int8 inference.
//
//   quantizeSymmetric : q = clamp(round_to_nearest_even(x * invScale), -127, 127) as int8
//   dequantizeAffine  : y = (float)(q - zeroPoint) * scale, q stored as uint8
//   toFixedPointFloor : Q16.16 fixed point, rounding toward -infinity

#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cmath>
#include <vector>
#include <algorithm>
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

#define QMAX 127
#define FIXED_ONE 65536.0f   // 1.0 in Q16.16

__global__ void quantizeSymmetric(const float* __restrict__ x,
                                  int8_t* __restrict__ q,
                                  float invScale,
                                  int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int v = __float2int_rn(x[i] * invScale);
        v = max(-QMAX, min(QMAX, v));
        q[i] = (int8_t)v;
    }
}

__global__ void dequantizeAffine(const uint8_t* __restrict__ q,
                                 float* __restrict__ y,
                                 int zeroPoint,
                                 float scale,
                                 int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = __int2float_rn((int)q[i] - zeroPoint) * scale;
    }
}

__global__ void toFixedPointFloor(const float* __restrict__ x, int32_t* __restrict__ fx, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        fx[i] = __float2int_rd(x[i] * FIXED_ONE);
    }
}

int main()
{
    const int n = 20000;
    const float absMax = 3.0f;
    const float invScale = (float)QMAX / absMax;
    const int threads = 256;
    const int blocks = (n + threads - 1) / threads;

    std::vector<float> hX(n);
    for (int i = 0; i < n; ++i) hX[i] = 8.0f * rand() / (float)RAND_MAX - 4.0f;

    float *dX, *dY;
    int8_t* dQ;
    uint8_t* dQu;
    int32_t* dFx;
    CUDA_CHECK(cudaMalloc(&dX, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dY, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dQ, n * sizeof(int8_t)));
    CUDA_CHECK(cudaMalloc(&dQu, n * sizeof(uint8_t)));
    CUDA_CHECK(cudaMalloc(&dFx, n * sizeof(int32_t)));
    CUDA_CHECK(cudaMemcpy(dX, hX.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    quantizeSymmetric<<<blocks, threads>>>(dX, dQ, invScale, n);
    CUDA_CHECK(cudaGetLastError());

    std::vector<int8_t> hQ(n);
    CUDA_CHECK(cudaMemcpy(hQ.data(), dQ, n * sizeof(int8_t), cudaMemcpyDeviceToHost));

    // re-encode as asymmetric uint8 with zero point 128 and dequantise
    std::vector<uint8_t> hQu(n);
    for (int i = 0; i < n; ++i) hQu[i] = (uint8_t)(hQ[i] + 128);
    CUDA_CHECK(cudaMemcpy(dQu, hQu.data(), n * sizeof(uint8_t), cudaMemcpyHostToDevice));
    dequantizeAffine<<<blocks, threads>>>(dQu, dY, 128, 1.0f / invScale, n);
    CUDA_CHECK(cudaGetLastError());

    toFixedPointFloor<<<blocks, threads>>>(dX, dFx, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> hY(n);
    CUDA_CHECK(cudaMemcpy(hY.data(), dY, n * sizeof(float), cudaMemcpyDeviceToHost));
    float maxErr = 0.0f;
    for (int i = 0; i < n; ++i) {
        float clipped = std::min(absMax, std::max(-absMax, hX[i]));
        maxErr = std::max(maxErr, fabsf(hY[i] - clipped));
    }
    printf("int8 round-trip max error %g (step %g)\n", maxErr, 1.0f / invScale);

    CUDA_CHECK(cudaFree(dX));
    CUDA_CHECK(cudaFree(dY));
    CUDA_CHECK(cudaFree(dQ));
    CUDA_CHECK(cudaFree(dQu));
    CUDA_CHECK(cudaFree(dFx));
    return 0;
}
