// Kernels on CUDA vector types.
//
//   axpy_float4:        y = a*x + y, four floats per thread through 16-byte
//                       float4 loads and stores.
//   complex_mul_float2: c = a * b for interleaved complex numbers stored as
//                       float2 (x = real, y = imaginary), optionally with b
//                       conjugated (as in cross-correlation).
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

__global__ void axpy_float4(int n4, float a,
                            const float4* __restrict__ x,
                            float4* __restrict__ y)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) return;
    const float4 xv = x[i];
    const float4 yv = y[i];
    y[i] = make_float4(fmaf(a, xv.x, yv.x), fmaf(a, xv.y, yv.y),
                       fmaf(a, xv.z, yv.z), fmaf(a, xv.w, yv.w));
}

__device__ __forceinline__ float2 cmul(float2 p, float2 q)
{
    return make_float2(p.x * q.x - p.y * q.y, p.x * q.y + p.y * q.x);
}

__device__ __forceinline__ float2 conj2(float2 p)
{
    return make_float2(p.x, -p.y);
}

__global__ void complex_mul_float2(const float2* __restrict__ a,
                                   const float2* __restrict__ b,
                                   float2* __restrict__ c,
                                   int n, int conjugate_b)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float2 bv = conjugate_b ? conj2(b[i]) : b[i];
        c[i] = cmul(a[i], bv);
    }
}

int main()
{
    srand(606);

    // --- float4 axpy ---
    const int n = 6000;            // floats, a multiple of 4
    const int n4 = n / 4;
    const float a = 0.8f;
    std::vector<float> h_x(n), h_y(n);
    for (auto& v : h_x) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    for (auto& v : h_y) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    float4 *d_x, *d_y;
    CUDA_CHECK(cudaMalloc(&d_x, n4 * sizeof(float4)));
    CUDA_CHECK(cudaMalloc(&d_y, n4 * sizeof(float4)));
    CUDA_CHECK(cudaMemcpy(d_x, h_x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_y, h_y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    axpy_float4<<<(n4 + 255) / 256, 256>>>(n4, a, d_x, d_y);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(h_y.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
    printf("axpy_float4: y[0] = %f\n", h_y[0]);

    // --- complex multiply ---
    const int nc = 3000;
    std::vector<float2> h_a(nc), h_b(nc), h_c(nc);
    for (int i = 0; i < nc; ++i) {
        h_a[i] = make_float2(2.0f * rand() / (float)RAND_MAX - 1.0f, 2.0f * rand() / (float)RAND_MAX - 1.0f);
        h_b[i] = make_float2(2.0f * rand() / (float)RAND_MAX - 1.0f, 2.0f * rand() / (float)RAND_MAX - 1.0f);
    }
    float2 *d_a, *d_b, *d_c;
    CUDA_CHECK(cudaMalloc(&d_a, nc * sizeof(float2)));
    CUDA_CHECK(cudaMalloc(&d_b, nc * sizeof(float2)));
    CUDA_CHECK(cudaMalloc(&d_c, nc * sizeof(float2)));
    CUDA_CHECK(cudaMemcpy(d_a, h_a.data(), nc * sizeof(float2), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, h_b.data(), nc * sizeof(float2), cudaMemcpyHostToDevice));
    complex_mul_float2<<<(nc + 127) / 128, 128>>>(d_a, d_b, d_c, nc, 1);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h_c.data(), d_c, nc * sizeof(float2), cudaMemcpyDeviceToHost));
    printf("complex_mul_float2: c[0] = (%f, %f)\n", h_c[0].x, h_c[0].y);

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_c));
    return 0;
}
