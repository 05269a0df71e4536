// Depthwise 2-D convolution in NHWC layout (MobileNet style), stride 1:
//
//   out[n][h][w][c] = bias[c] + sum_{r,s} in[n][h - pad + r][w - pad + s][c] * filt[r][s][c]
//
// Filters are stored [R][S][C] so that, like the activations, neighbouring
// channels are contiguous: threads with consecutive c read consecutive
// addresses.  A ReLU6 clamp is fused into the epilogue.
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

#define DW_THREADS 256

__device__ __forceinline__ float relu6(float v)
{
    return fminf(fmaxf(v, 0.0f), 6.0f);
}

__global__ void depthwise_conv2d_nhwc_relu6(const float* __restrict__ in,
                                            const float* __restrict__ filt,
                                            const float* __restrict__ bias,
                                            float* __restrict__ out,
                                            int N, int H, int W, int C,
                                            int R, int S, int pad)
{
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= N * H * W * C) return;

    const int c = idx % C;
    const int w = (idx / C) % W;
    const int h = (idx / (C * W)) % H;
    const int n = idx / (C * W * H);

    float acc = bias[c];
    for (int r = 0; r < R; ++r) {
        const int ih = h - pad + r;
        if (ih < 0 || ih >= H) continue;
        for (int s = 0; s < S; ++s) {
            const int iw = w - pad + s;
            if (iw < 0 || iw >= W) continue;
            const float v = in[(((size_t)n * H + ih) * W + iw) * C + c];
            acc = fmaf(v, filt[(r * S + s) * C + c], acc);
        }
    }
    out[idx] = relu6(acc);
}

int main()
{
    const int N = 2, H = 15, W = 13, C = 24, R = 5, S = 5, pad = 2;
    const size_t act = (size_t)N * H * W * C;
    std::vector<float> h_in(act), h_f((size_t)R * S * C), h_b(C), h_out(act);
    srand(31);
    for (auto& v : h_in) v = 4.0f * rand() / (float)RAND_MAX - 1.0f;
    for (auto& v : h_f) v = 1.0f * rand() / (float)RAND_MAX - 0.3f;
    for (auto& v : h_b) v = 0.5f * rand() / (float)RAND_MAX;

    float *d_in, *d_f, *d_b, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, act * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_f, h_f.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_b, C * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, act * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, h_in.data(), act * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_f, h_f.data(), h_f.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, h_b.data(), C * sizeof(float), cudaMemcpyHostToDevice));

    const int blocks = (int)((act + DW_THREADS - 1) / DW_THREADS);
    depthwise_conv2d_nhwc_relu6<<<blocks, DW_THREADS>>>(d_in, d_f, d_b, d_out, N, H, W, C, R, S, pad);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h_out.data(), d_out, act * sizeof(float), cudaMemcpyDeviceToHost));
    printf("depthwise conv: out[0] = %f\n", h_out[0]);

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_f));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_out));
    return 0;
}
