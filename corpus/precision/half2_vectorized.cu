// Vectorised half-precision kernels working on packed half2 pairs.
//
//   half2_fma_affine:  y = x * scale + shift, elementwise, two halves per
//                      thread with __hfma2; an odd trailing element is
//                      handled with the scalar __hfma by one extra thread.
//   half2_dot_partial: per-block partial sums of dot(a, b) over half2 pairs,
//                      accumulated in float (grid-stride loop, shared-memory
//                      tree); the host adds the gridDim.x partials.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
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

#define AFFINE_BLOCK 256
#define DOT_BLOCK 128
#define DOT_GRID 4

__global__ void half2_fma_affine(const __half* __restrict__ x,
                                 const __half* __restrict__ scale,
                                 const __half* __restrict__ shift,
                                 __half* __restrict__ y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int n2 = n / 2;
    const half2* x2 = reinterpret_cast<const half2*>(x);
    const half2* s2 = reinterpret_cast<const half2*>(scale);
    const half2* b2 = reinterpret_cast<const half2*>(shift);
    half2* y2 = reinterpret_cast<half2*>(y);

    if (i < n2) {
        y2[i] = __hfma2(x2[i], s2[i], b2[i]);
    } else if (i == n2 && (n & 1)) {
        y[n - 1] = __hfma(x[n - 1], scale[n - 1], shift[n - 1]);
    }
}

__global__ void half2_dot_partial(const __half* __restrict__ a,
                                  const __half* __restrict__ b,
                                  float* __restrict__ partial, int n)
{
    __shared__ float s_sum[DOT_BLOCK];
    const half2* a2 = reinterpret_cast<const half2*>(a);
    const half2* b2 = reinterpret_cast<const half2*>(b);
    const int n2 = n / 2;   // n is even

    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += gridDim.x * blockDim.x) {
        const float2 fa = __half22float2(a2[i]);
        const half2 hb = b2[i];
        acc = fmaf(fa.x, __low2float(hb), acc);
        acc = fmaf(fa.y, __high2float(hb), acc);
    }
    s_sum[threadIdx.x] = acc;
    __syncthreads();

    for (int stride = DOT_BLOCK / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) s_sum[threadIdx.x] += s_sum[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = s_sum[0];
}

static __half rand_half(float lo, float hi)
{
    return __float2half(lo + (hi - lo) * (rand() / (float)RAND_MAX));
}

int main()
{
    srand(101);

    // --- affine, odd length ---
    const int n = 4001;
    std::vector<__half> h_x(n), h_s(n), h_b(n), h_y(n);
    for (int i = 0; i < n; ++i) {
        h_x[i] = rand_half(-2.0f, 2.0f);
        h_s[i] = rand_half(0.5f, 1.5f);
        h_b[i] = rand_half(-1.0f, 1.0f);
    }
    __half *d_x, *d_s, *d_b, *d_y;
    CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&d_s, n * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&d_b, n * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&d_y, n * sizeof(__half)));
    CUDA_CHECK(cudaMemcpy(d_x, h_x.data(), n * sizeof(__half), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_s, h_s.data(), n * sizeof(__half), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, h_b.data(), n * sizeof(__half), cudaMemcpyHostToDevice));

    const int threads_needed = n / 2 + (n & 1);
    half2_fma_affine<<<(threads_needed + AFFINE_BLOCK - 1) / AFFINE_BLOCK, AFFINE_BLOCK>>>(
        d_x, d_s, d_b, d_y, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(h_y.data(), d_y, n * sizeof(__half), cudaMemcpyDeviceToHost));
    printf("half2_fma_affine: y[n-1] = %f\n", __half2float(h_y[n - 1]));

    // --- dot product ---
    const int m = 3000;
    std::vector<__half> h_a(m), h_v(m);
    for (int i = 0; i < m; ++i) {
        h_a[i] = rand_half(-1.0f, 1.0f);
        h_v[i] = rand_half(-1.0f, 1.0f);
    }
    __half *d_a, *d_v;
    float* d_partial;
    CUDA_CHECK(cudaMalloc(&d_a, m * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&d_v, m * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&d_partial, DOT_GRID * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_a, h_a.data(), m * sizeof(__half), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_v, h_v.data(), m * sizeof(__half), cudaMemcpyHostToDevice));
    half2_dot_partial<<<DOT_GRID, DOT_BLOCK>>>(d_a, d_v, d_partial, m);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    float h_partial[DOT_GRID];
    CUDA_CHECK(cudaMemcpy(h_partial, d_partial, sizeof(h_partial), cudaMemcpyDeviceToHost));
    float dot = 0.0f;
    for (int i = 0; i < DOT_GRID; ++i) dot += h_partial[i];
    printf("half2_dot_partial: dot = %f\n", dot);

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_s));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_v));
    CUDA_CHECK(cudaFree(d_partial));
    return 0;
}
