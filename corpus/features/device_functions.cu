// Kernels built from chains of __device__ helper functions.
//
//   poly_soft_clip:   y = limit * tanh(p(x) / limit), p evaluated by Horner's
//                     rule in a looping __device__ function; the kernel calls
//                     transform_element -> soft_clip / horner.
//   hypot_newton:     r = sqrt(a^2 + b^2) where the square root is a fixed
//                     number of Newton-Raphson steps in a __device__ loop.
#include <cuda_runtime.h>
#include <cmath>
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

#define BLOCK 256

// p(x) = coeffs[0] * x^degree + coeffs[1] * x^(degree-1) + ... + coeffs[degree]
__device__ float horner(const float* __restrict__ coeffs, int degree, float x)
{
    float acc = coeffs[0];
    for (int i = 1; i <= degree; ++i)
        acc = fmaf(acc, x, coeffs[i]);
    return acc;
}

__device__ __forceinline__ float soft_clip(float v, float limit)
{
    return limit * tanhf(v / limit);
}

__device__ float transform_element(const float* __restrict__ coeffs, int degree,
                                   float x, float limit)
{
    const float p = horner(coeffs, degree, x);
    return soft_clip(p, limit);
}

__global__ void poly_soft_clip(const float* __restrict__ x,
                               const float* __restrict__ coeffs,
                               float* __restrict__ y,
                               int n, int degree, float limit)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = transform_element(coeffs, degree, x[i], limit);
}

// Newton-Raphson square root, v > 0.  Starting above the root, the iterates
// decrease monotonically towards sqrt(v).
__device__ float newton_sqrt(float v, int iters)
{
    float r = v > 1.0f ? v : 1.0f;
    for (int k = 0; k < iters; ++k)
        r = 0.5f * (r + v / r);
    return r;
}

__device__ __forceinline__ float sum_of_squares(float a, float b)
{
    return fmaf(a, a, b * b);
}

__global__ void hypot_newton(const float* __restrict__ a,
                             const float* __restrict__ b,
                             float* __restrict__ r,
                             int n, int iters)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    r[i] = newton_sqrt(sum_of_squares(a[i], b[i]), iters);
}

int main()
{
    srand(3141);
    const int n = 3000;
    const int degree = 5;
    const float limit = 2.0f;
    std::vector<float> h_x(n), h_c(degree + 1), h_y(n);
    for (auto& v : h_x) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    for (auto& v : h_c) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;

    float *d_x, *d_c, *d_y;
    CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_c, (degree + 1) * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, h_x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_c, h_c.data(), (degree + 1) * sizeof(float), cudaMemcpyHostToDevice));
    poly_soft_clip<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(d_x, d_c, d_y, n, degree, limit);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(h_y.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
    printf("poly_soft_clip: y[0] = %f\n", h_y[0]);

    const int m = 2000;
    const int iters = 12;
    std::vector<float> h_a(m), h_b(m), h_r(m);
    for (int i = 0; i < m; ++i) {
        h_a[i] = 0.5f + 7.5f * rand() / (float)RAND_MAX;
        h_b[i] = 0.5f + 7.5f * rand() / (float)RAND_MAX;
    }
    float *d_a, *d_b, *d_r;
    CUDA_CHECK(cudaMalloc(&d_a, m * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_b, m * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_r, m * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_a, h_a.data(), m * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, h_b.data(), m * sizeof(float), cudaMemcpyHostToDevice));
    hypot_newton<<<(m + BLOCK - 1) / BLOCK, BLOCK>>>(d_a, d_b, d_r, m, iters);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h_r.data(), d_r, m * sizeof(float), cudaMemcpyDeviceToHost));

    float worst = 0.0f;
    for (int i = 0; i < m; ++i)
        worst = fmaxf(worst, fabsf(h_r[i] - hypotf(h_a[i], h_b[i])) / hypotf(h_a[i], h_b[i]));
    printf("hypot_newton: worst relative error %g\n", worst);

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_c));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_r));
    return 0;
}
