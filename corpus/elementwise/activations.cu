// activations.cu - pointwise activation functions used in transformer MLPs.
//
//   geluForward : tanh approximation of GELU,  0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
//   siluForward : SiLU / swish with a slope,   x * sigmoid(beta * x)

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

#define GELU_SQRT_2_OVER_PI 0.7978845608028654f
#define GELU_CUBIC_COEF     0.044715f

__device__ __forceinline__ float geluTanh(float x)
{
    const float inner = GELU_SQRT_2_OVER_PI * (x + GELU_CUBIC_COEF * x * x * x);
    return 0.5f * x * (1.0f + tanhf(inner));
}

__device__ __forceinline__ float sigmoidStable(float z)
{
    // 1 / (1 + e^-z) without overflowing e^-z for large negative z
    if (z >= 0.0f) {
        return 1.0f / (1.0f + expf(-z));
    }
    const float e = expf(z);
    return e / (1.0f + e);
}

__global__ void geluForward(const float* __restrict__ in, float* __restrict__ out, size_t n)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = geluTanh(in[i]);
    }
}

__global__ void siluForward(const float* __restrict__ in, float* __restrict__ out, size_t n, float beta)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float x = in[i];
        out[i] = x * sigmoidStable(beta * x);
    }
}

static float hostGelu(float x)
{
    return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}

int main()
{
    const size_t nGelu = 65537;
    const size_t nSilu = 40000;
    const float beta = 1.702f;

    std::vector<float> hIn(nGelu), hOut(nGelu);
    for (size_t i = 0; i < nGelu; ++i) hIn[i] = -2.0f + 4.0f * (float)i / (float)(nGelu - 1);

    float *dIn, *dOut;
    CUDA_CHECK(cudaMalloc(&dIn, nGelu * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dOut, nGelu * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dIn, hIn.data(), nGelu * sizeof(float), cudaMemcpyHostToDevice));

    const unsigned int geluThreads = 256;
    const unsigned int geluBlocks = (unsigned int)((nGelu + geluThreads - 1) / geluThreads);
    geluForward<<<geluBlocks, geluThreads>>>(dIn, dOut, nGelu);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(hOut.data(), dOut, nGelu * sizeof(float), cudaMemcpyDeviceToHost));

    float maxErr = 0.0f;
    for (size_t i = 0; i < nGelu; ++i) maxErr = fmaxf(maxErr, fabsf(hOut[i] - hostGelu(hIn[i])));
    printf("gelu max abs error %g\n", maxErr);

    // SiLU reuses the first nSilu inputs, launched with smaller blocks.
    const unsigned int siluThreads = 128;
    const unsigned int siluBlocks = (unsigned int)((nSilu + siluThreads - 1) / siluThreads);
    siluForward<<<siluBlocks, siluThreads>>>(dIn, dOut, nSilu, beta);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hOut.data(), dOut, nSilu * sizeof(float), cudaMemcpyDeviceToHost));
    printf("silu(out[0]) = %f\n", hOut[0]);

    CUDA_CHECK(cudaFree(dIn));
    CUDA_CHECK(cudaFree(dOut));
    return 0;
}
