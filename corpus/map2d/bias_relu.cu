// bias_relu.cu - fused "linear layer epilogue": act[r][c] = max(act[r][c] + bias[c], 0).
//
// Operates in place on a row-major [rows x cols] activation matrix (one row per
// token, one column per feature). 32x8 blocks: a warp covers 32 consecutive
// features of one row, so both act and bias accesses are coalesced.

#include <cstdio>
#include <cstdlib>
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

#define TILE_COLS 32
#define TILE_ROWS 8

__device__ __forceinline__ float relu(float v) { return v > 0.0f ? v : 0.0f; }

__global__ void addBiasRelu(float* __restrict__ act,
                            const float* __restrict__ bias,
                            int rows, int cols)
{
    const int c = blockIdx.x * TILE_COLS + threadIdx.x;
    const int r = blockIdx.y * TILE_ROWS + threadIdx.y;
    if (r >= rows || c >= cols) return;

    float* rowPtr = act + (size_t)r * cols;
    rowPtr[c] = relu(rowPtr[c] + bias[c]);
}

int main()
{
    const int rows = 777;     // tokens
    const int cols = 300;     // hidden features
    const size_t count = (size_t)rows * cols;

    std::vector<float> hAct(count), hBias(cols);
    for (size_t i = 0; i < count; ++i) hAct[i] = (float)((int)(i % 201) - 100) / 100.0f;
    for (int c = 0; c < cols; ++c) hBias[c] = 0.01f * (float)(c % 21 - 10);

    float *dAct, *dBias;
    CUDA_CHECK(cudaMalloc(&dAct, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dBias, cols * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dAct, hAct.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dBias, hBias.data(), cols * sizeof(float), cudaMemcpyHostToDevice));

    const dim3 block(TILE_COLS, TILE_ROWS);
    const dim3 grid((cols + TILE_COLS - 1) / TILE_COLS, (rows + TILE_ROWS - 1) / TILE_ROWS);
    addBiasRelu<<<grid, block>>>(dAct, dBias, rows, cols);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> hOut(count);
    CUDA_CHECK(cudaMemcpy(hOut.data(), dAct, count * sizeof(float), cudaMemcpyDeviceToHost));
    size_t zeros = 0;
    for (size_t i = 0; i < count; ++i) zeros += (hOut[i] == 0.0f);
    printf("addBiasRelu: %zu of %zu activations clipped to zero\n", zeros, count);

    CUDA_CHECK(cudaFree(dAct));
    CUDA_CHECK(cudaFree(dBias));
    return 0;
}
