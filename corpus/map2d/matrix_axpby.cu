// matrix_axpby.cu - C = alpha * A + beta * B over a row-major rows x cols matrix.
//
// A 2-D grid of 16x16 blocks: x walks columns (coalesced), y walks rows.
// Both guards are needed because neither dimension is a multiple of 16.

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

#define BLOCK_X 16
#define BLOCK_Y 16

__global__ void matrixAxpby(const float* __restrict__ A,
                            const float* __restrict__ B,
                            float* __restrict__ C,
                            int rows, int cols,
                            float alpha, float beta)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;

    if (row < rows && col < cols) {
        const size_t idx = (size_t)row * cols + col;
        C[idx] = alpha * A[idx] + beta * B[idx];
    }
}

int main()
{
    const int rows = 300, cols = 500;
    const float alpha = 0.75f, beta = 0.25f;
    const size_t count = (size_t)rows * cols;
    const size_t bytes = count * sizeof(float);

    std::vector<float> hA(count), hB(count), hC(count);
    for (size_t i = 0; i < count; ++i) {
        hA[i] = (float)(i % 97) / 97.0f;
        hB[i] = (float)(i % 89) / 89.0f;
    }

    float *dA, *dB, *dC;
    CUDA_CHECK(cudaMalloc(&dA, bytes));
    CUDA_CHECK(cudaMalloc(&dB, bytes));
    CUDA_CHECK(cudaMalloc(&dC, bytes));
    CUDA_CHECK(cudaMemcpy(dA, hA.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, hB.data(), bytes, cudaMemcpyHostToDevice));

    dim3 block(BLOCK_X, BLOCK_Y);
    dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    matrixAxpby<<<grid, block>>>(dA, dB, dC, rows, cols, alpha, beta);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hC.data(), dC, bytes, cudaMemcpyDeviceToHost));

    double maxErr = 0.0;
    for (size_t i = 0; i < count; ++i) {
        maxErr = fmax(maxErr, fabs((double)hC[i] - (alpha * hA[i] + beta * hB[i])));
    }
    printf("matrixAxpby %dx%d max abs error %g\n", rows, cols, maxErr);

    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dC));
    return 0;
}
