// Kernels reading their coefficients from __constant__ memory.
//
//   fir_filter_1d:  centred 9-tap FIR filter, y[i] = sum_t taps[t] * x[i + t - 4],
//                   samples outside [0, n) count as zero.
//   poly_eval_const: y = c0 + c1 x + c2 x^2 + c3 x^3 + c4 x^4 (Horner).
//
// Every thread of a warp reads the same coefficient at the same time, which
// is the access pattern the constant cache broadcasts.
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

#define FIR_TAPS 9
#define FIR_HALF (FIR_TAPS / 2)
#define POLY_TERMS 5

__constant__ float c_taps[FIR_TAPS];
__constant__ float c_poly[POLY_TERMS];   // c_poly[k] multiplies x^k

__global__ void fir_filter_1d(const float* __restrict__ x, float* __restrict__ y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
#pragma unroll
    for (int t = 0; t < FIR_TAPS; ++t) {
        const int j = i + t - FIR_HALF;
        if (j >= 0 && j < n)
            acc = fmaf(c_taps[t], x[j], acc);
    }
    y[i] = acc;
}

__global__ void poly_eval_const(const float* __restrict__ x, float* __restrict__ y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float v = x[i];
    float acc = c_poly[POLY_TERMS - 1];
#pragma unroll
    for (int k = POLY_TERMS - 2; k >= 0; --k)
        acc = fmaf(acc, v, c_poly[k]);
    y[i] = acc;
}

int main()
{
    // Windowed low-pass taps (roughly a Hann-weighted sinc, normalised).
    const float h_taps[FIR_TAPS] = {0.0086f, 0.0336f, 0.1090f, 0.2058f, 0.2860f,
                                    0.2058f, 0.1090f, 0.0336f, 0.0086f};
    const float h_poly[POLY_TERMS] = {0.5f, -1.25f, 0.75f, 0.3f, -0.05f};
    CUDA_CHECK(cudaMemcpyToSymbol(c_taps, h_taps, sizeof(h_taps)));
    CUDA_CHECK(cudaMemcpyToSymbol(c_poly, h_poly, sizeof(h_poly)));

    const int n = 3000;
    std::vector<float> h_x(n), h_y(n), h_p(n);
    srand(9);
    for (auto& v : h_x) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;

    float *d_x, *d_y, *d_p;
    CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_p, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, h_x.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    fir_filter_1d<<<(n + 255) / 256, 256>>>(d_x, d_y, n);
    CUDA_CHECK(cudaGetLastError());
    poly_eval_const<<<(n + 127) / 128, 128>>>(d_x, d_p, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_y.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_p.data(), d_p, n * sizeof(float), cudaMemcpyDeviceToHost));
    printf("fir y[0] = %f, poly p[0] = %f\n", h_y[0], h_p[0]);

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_p));
    return 0;
}
