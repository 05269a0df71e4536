// Single-precision GEMV kernels for a row-major matrix A [rows x cols].
//
//   gemv_row_per_thread:  y = alpha * A * x + beta * y   (one thread per row)
//   gemv_t_col_per_thread: z = A^T * w                   (one thread per column;
//                          neighbouring threads read neighbouring columns, so
//                          the loads of A are coalesced)
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

#define GEMV_BLOCK 128

__global__ void gemv_row_per_thread(int rows, int cols, float alpha,
                                    const float* __restrict__ A,
                                    const float* __restrict__ x,
                                    float beta, float* __restrict__ y)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        const float* a_row = A + (size_t)row * cols;
        float dot = 0.0f;
        for (int c = 0; c < cols; ++c)
            dot = fmaf(a_row[c], x[c], dot);
        y[row] = alpha * dot + beta * y[row];
    }
}

__global__ void gemv_t_col_per_thread(int rows, int cols,
                                      const float* __restrict__ A,
                                      const float* __restrict__ w,
                                      float* __restrict__ z)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= cols) return;
    float acc = 0.0f;
    for (int r = 0; r < rows; ++r)
        acc += A[(size_t)r * cols + col] * w[r];
    z[col] = acc;
}

int main()
{
    const int rows = 1000, cols = 77;
    const float alpha = 1.25f, beta = -0.5f;

    std::vector<float> h_A((size_t)rows * cols), h_x(cols), h_y(rows), h_w(rows), h_z(cols);
    srand(5);
    for (auto& v : h_A) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    for (auto& v : h_x) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    for (auto& v : h_y) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    for (auto& v : h_w) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;

    float *d_A, *d_x, *d_y, *d_w, *d_z;
    CUDA_CHECK(cudaMalloc(&d_A, h_A.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_x, cols * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, rows * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_w, rows * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_z, cols * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_A, h_A.data(), h_A.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_x, h_x.data(), cols * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_y, h_y.data(), rows * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_w, h_w.data(), rows * sizeof(float), cudaMemcpyHostToDevice));

    gemv_row_per_thread<<<(rows + GEMV_BLOCK - 1) / GEMV_BLOCK, GEMV_BLOCK>>>(
        rows, cols, alpha, d_A, d_x, beta, d_y);
    CUDA_CHECK(cudaGetLastError());
    gemv_t_col_per_thread<<<(cols + GEMV_BLOCK - 1) / GEMV_BLOCK, GEMV_BLOCK>>>(
        rows, cols, d_A, d_w, d_z);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_y.data(), d_y, rows * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_z.data(), d_z, cols * sizeof(float), cudaMemcpyDeviceToHost));
    printf("y[0] = %f, z[0] = %f\n", h_y[0], h_z[0]);

    CUDA_CHECK(cudaFree(d_A));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_w));
    CUDA_CHECK(cudaFree(d_z));
    return 0;
}
