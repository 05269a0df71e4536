// bfloat16 kernels: load bf16, compute in float, store bf16.
//
//   bf16_swiglu:         out = silu(gate) * up, the gated MLP activation of
//                        LLaMA-style models; grid-stride loop.
//   quantize_f32_to_bf16: out = bf16(x * scale), round to nearest even.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
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

__device__ __forceinline__ float silu(float g)
{
    return g / (1.0f + expf(-g));
}

__global__ void bf16_swiglu(const __nv_bfloat16* __restrict__ gate,
                            const __nv_bfloat16* __restrict__ up,
                            __nv_bfloat16* __restrict__ out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        const float g = __bfloat162float(gate[i]);
        const float u = __bfloat162float(up[i]);
        out[i] = __float2bfloat16(silu(g) * u);
    }
}

__global__ void quantize_f32_to_bf16(const float* __restrict__ x,
                                     __nv_bfloat16* __restrict__ out,
                                     float scale, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = __float2bfloat16_rn(x[i] * scale);
}

int main()
{
    srand(55);

    // --- SwiGLU ---
    const int tokens = 12, ffn = 500;
    const int n = tokens * ffn;
    std::vector<__nv_bfloat16> h_gate(n), h_up(n), h_out(n);
    for (int i = 0; i < n; ++i) {
        h_gate[i] = __float2bfloat16(8.0f * rand() / (float)RAND_MAX - 4.0f);
        h_up[i] = __float2bfloat16(4.0f * rand() / (float)RAND_MAX - 2.0f);
    }
    __nv_bfloat16 *d_gate, *d_up, *d_out;
    CUDA_CHECK(cudaMalloc(&d_gate, n * sizeof(__nv_bfloat16)));
    CUDA_CHECK(cudaMalloc(&d_up, n * sizeof(__nv_bfloat16)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(__nv_bfloat16)));
    CUDA_CHECK(cudaMemcpy(d_gate, h_gate.data(), n * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_up, h_up.data(), n * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
    bf16_swiglu<<<16, 128>>>(d_gate, d_up, d_out, n);   // grid-stride: 2048 threads for 6000 items
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(h_out.data(), d_out, n * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
    printf("bf16_swiglu: out[0] = %f\n", __bfloat162float(h_out[0]));

    // --- quantisation ---
    const int m = 5000;
    const float scale = 0.37f;
    std::vector<float> h_x(m);
    std::vector<__nv_bfloat16> h_q(m);
    for (auto& v : h_x) v = 200.0f * rand() / (float)RAND_MAX - 100.0f;
    float* d_x;
    __nv_bfloat16* d_q;
    CUDA_CHECK(cudaMalloc(&d_x, m * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_q, m * sizeof(__nv_bfloat16)));
    CUDA_CHECK(cudaMemcpy(d_x, h_x.data(), m * sizeof(float), cudaMemcpyHostToDevice));
    quantize_f32_to_bf16<<<(m + 255) / 256, 256>>>(d_x, d_q, scale, m);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h_q.data(), d_q, m * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
    printf("quantize: %f -> %f\n", h_x[0] * scale, __bfloat162float(h_q[0]));

    CUDA_CHECK(cudaFree(d_gate));
    CUDA_CHECK(cudaFree(d_up));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_q));
    return 0;
}
