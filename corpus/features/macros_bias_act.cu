// Bias + activation over a pitched 2-D matrix, written with preprocessor
// macros for sizes, indexing and the activation choice.
//
// The matrix has `rows` rows of `cols` valid columns stored with a leading
// dimension `ld` >= cols; the padding columns are left untouched.
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

// Build configuration: comment out for a plain ReLU.
#define USE_LEAKY_RELU

#ifndef LEAKY_SLOPE
#define LEAKY_SLOPE 0.1f
#endif

#define TILE_COLS 32
#define TILE_ROWS 8
#define IDX2D(row, col, ld) ((size_t)(row) * (ld) + (col))
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
#define IN_BOUNDS(r, c, nr, nc) ((r) < (nr) && (c) < (nc))

#ifdef USE_LEAKY_RELU
#define ACTIVATION(v) ((v) > 0.0f ? (v) : LEAKY_SLOPE * (v))
#else
#define ACTIVATION(v) fmaxf((v), 0.0f)
#endif

__global__ void bias_act_2d(const float* __restrict__ in,
                            const float* __restrict__ bias,
                            float* __restrict__ out,
                            int rows, int cols, int ld)
{
    const int col = blockIdx.x * TILE_COLS + threadIdx.x;
    const int row = blockIdx.y * TILE_ROWS + threadIdx.y;
    if (!IN_BOUNDS(row, col, rows, cols)) return;

    const float v = in[IDX2D(row, col, ld)] + bias[col];
    out[IDX2D(row, col, ld)] = ACTIVATION(v);
}

int main()
{
    const int rows = 45, cols = 70, ld = 72;
    const size_t count = (size_t)rows * ld;
    std::vector<float> h_in(count), h_bias(cols), h_out(count, 0.0f);
    srand(404);
    for (auto& v : h_in) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    for (auto& v : h_bias) v = 0.5f * rand() / (float)RAND_MAX - 0.25f;

    float *d_in, *d_bias, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_bias, cols * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, count * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, h_in.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_bias, h_bias.data(), cols * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_out, h_out.data(), count * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(TILE_COLS, TILE_ROWS);
    dim3 grid(CEIL_DIV(cols, TILE_COLS), CEIL_DIV(rows, TILE_ROWS));
    bias_act_2d<<<grid, block>>>(d_in, d_bias, d_out, rows, cols, ld);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h_out.data(), d_out, count * sizeof(float), cudaMemcpyDeviceToHost));
    printf("bias_act_2d: out[0] = %f, padding out[%d] = %f\n", h_out[0], cols, h_out[cols]);

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_bias));
    CUDA_CHECK(cudaFree(d_out));
    return 0;
}
