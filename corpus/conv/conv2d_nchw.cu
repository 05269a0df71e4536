// Direct 2-D convolution (cross-correlation, as in deep-learning frameworks),
// NCHW activations and KCRS filters:
//
//   out[n][k][p][q] = bias[k] + sum_{c,r,s} in[n][c][p*stride - pad + r][q*stride - pad + s]
//                                           * w[k][c][r][s]
//
// Input pixels that fall outside the image read as zero (implicit padding).
// One thread computes one output pixel; a 1-D grid covers N*K*P*Q outputs.
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

#define CONV_THREADS 128

struct ConvShape {
    int N, C, H, W;     // input
    int K, R, S;        // filters
    int stride, pad;
    int P, Q;           // output height / width
};

static int conv_out_dim(int in, int filt, int stride, int pad)
{
    return (in + 2 * pad - filt) / stride + 1;
}

__global__ void conv2d_nchw(const float* __restrict__ input,
                            const float* __restrict__ weight,
                            const float* __restrict__ bias,
                            float* __restrict__ output,
                            int N, int C, int H, int W,
                            int K, int R, int S,
                            int stride, int pad, int P, int Q)
{
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    const int total = N * K * P * Q;
    if (idx >= total) return;

    // Decompose the flat index into (n, k, p, q), q fastest.
    const int q = idx % Q;
    const int p = (idx / Q) % P;
    const int k = (idx / (P * Q)) % K;
    const int n = idx / (K * P * Q);

    const int h0 = p * stride - pad;
    const int w0 = q * stride - pad;

    float acc = bias[k];
    for (int c = 0; c < C; ++c) {
        const float* in_plane = input + ((size_t)n * C + c) * H * W;
        const float* w_plane = weight + ((size_t)k * C + c) * R * S;
        for (int r = 0; r < R; ++r) {
            const int h = h0 + r;
            if (h < 0 || h >= H) continue;
            for (int s = 0; s < S; ++s) {
                const int w = w0 + s;
                if (w < 0 || w >= W) continue;
                acc = fmaf(in_plane[h * W + w], w_plane[r * S + s], acc);
            }
        }
    }
    output[idx] = acc;
}

int main()
{
    ConvShape cs;
    cs.N = 2; cs.C = 3; cs.H = 19; cs.W = 21;
    cs.K = 4; cs.R = 3; cs.S = 3;
    cs.stride = 2; cs.pad = 1;
    cs.P = conv_out_dim(cs.H, cs.R, cs.stride, cs.pad);   // 10
    cs.Q = conv_out_dim(cs.W, cs.S, cs.stride, cs.pad);   // 11

    const size_t in_count = (size_t)cs.N * cs.C * cs.H * cs.W;
    const size_t w_count = (size_t)cs.K * cs.C * cs.R * cs.S;
    const size_t out_count = (size_t)cs.N * cs.K * cs.P * cs.Q;

    std::vector<float> h_in(in_count), h_w(w_count), h_b(cs.K), h_out(out_count);
    srand(21);
    for (auto& v : h_in) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    for (auto& v : h_w) v = 1.0f * rand() / (float)RAND_MAX - 0.5f;
    for (auto& v : h_b) v = 0.2f * rand() / (float)RAND_MAX - 0.1f;

    float *d_in, *d_w, *d_b, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, in_count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_w, w_count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_b, cs.K * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, out_count * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, h_in.data(), in_count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_w, h_w.data(), w_count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, h_b.data(), cs.K * sizeof(float), cudaMemcpyHostToDevice));

    const int blocks = (int)((out_count + CONV_THREADS - 1) / CONV_THREADS);
    conv2d_nchw<<<blocks, CONV_THREADS>>>(d_in, d_w, d_b, d_out,
                                          cs.N, cs.C, cs.H, cs.W, cs.K, cs.R, cs.S,
                                          cs.stride, cs.pad, cs.P, cs.Q);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h_out.data(), d_out, out_count * sizeof(float), cudaMemcpyDeviceToHost));
    printf("conv2d_nchw: output %dx%dx%dx%d, out[0] = %f\n", cs.N, cs.K, cs.P, cs.Q, h_out[0]);

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_w));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_out));
    return 0;
}
