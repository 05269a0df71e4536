// Row-wise softmax and log-softmax over a [rows x cols] matrix.
//
// One thread block handles one row.  The row maximum and the sum of the
// exponentials are both reduced through a shared-memory tree, so the block
// size must be a power of two (SOFTMAX_THREADS).
#include <cuda_runtime.h>
#include <cfloat>
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

#define SOFTMAX_THREADS 128

// Numerically stable softmax: y = exp(x - max) / sum(exp(x - max)).
__global__ void softmax_rows(const float* __restrict__ input,
                             float* __restrict__ output,
                             int rows, int cols)
{
    __shared__ float s_red[SOFTMAX_THREADS];

    const int row = blockIdx.x;
    if (row >= rows) return;  // uniform for the whole block

    const float* x = input + (size_t)row * cols;
    float* y = output + (size_t)row * cols;
    const int tid = threadIdx.x;

    // Pass 1: row maximum.
    float local_max = -FLT_MAX;
    for (int c = tid; c < cols; c += blockDim.x)
        local_max = fmaxf(local_max, x[c]);
    s_red[tid] = local_max;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
            s_red[tid] = fmaxf(s_red[tid], s_red[tid + stride]);
        __syncthreads();
    }
    const float row_max = s_red[0];
    __syncthreads();  // everybody has read s_red[0] before it is reused

    // Pass 2: sum of exponentials.
    float local_sum = 0.0f;
    for (int c = tid; c < cols; c += blockDim.x)
        local_sum += expf(x[c] - row_max);
    s_red[tid] = local_sum;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
            s_red[tid] += s_red[tid + stride];
        __syncthreads();
    }
    const float inv_sum = 1.0f / s_red[0];

    // Pass 3: normalise.
    for (int c = tid; c < cols; c += blockDim.x)
        y[c] = expf(x[c] - row_max) * inv_sum;
}

// log_softmax(x) = x - max - log(sum(exp(x - max))), using the fast intrinsics.
__global__ void log_softmax_rows(const float* __restrict__ input,
                                 float* __restrict__ output,
                                 int rows, int cols)
{
    __shared__ float s_red[SOFTMAX_THREADS];

    const int row = blockIdx.x;
    if (row >= rows) return;

    const float* x = input + (size_t)row * cols;
    float* y = output + (size_t)row * cols;
    const int tid = threadIdx.x;

    float local_max = -FLT_MAX;
    for (int c = tid; c < cols; c += blockDim.x)
        local_max = fmaxf(local_max, x[c]);
    s_red[tid] = local_max;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
            s_red[tid] = fmaxf(s_red[tid], s_red[tid + stride]);
        __syncthreads();
    }
    const float row_max = s_red[0];
    __syncthreads();

    float local_sum = 0.0f;
    for (int c = tid; c < cols; c += blockDim.x)
        local_sum += __expf(x[c] - row_max);
    s_red[tid] = local_sum;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
            s_red[tid] += s_red[tid + stride];
        __syncthreads();
    }
    const float log_sum = logf(s_red[0]);

    for (int c = tid; c < cols; c += blockDim.x)
        y[c] = x[c] - row_max - log_sum;
}

int main()
{
    const int rows = 37;
    const int cols = 300;
    const size_t count = (size_t)rows * cols;
    const size_t bytes = count * sizeof(float);

    std::vector<float> h_x(count), h_y(count), h_logy(count);
    srand(1234);
    for (size_t i = 0; i < count; ++i)
        h_x[i] = 8.0f * (rand() / (float)RAND_MAX) - 4.0f;

    float *d_x = nullptr, *d_y = nullptr, *d_logy = nullptr;
    CUDA_CHECK(cudaMalloc(&d_x, bytes));
    CUDA_CHECK(cudaMalloc(&d_y, bytes));
    CUDA_CHECK(cudaMalloc(&d_logy, bytes));
    CUDA_CHECK(cudaMemcpy(d_x, h_x.data(), bytes, cudaMemcpyHostToDevice));

    dim3 block(SOFTMAX_THREADS);
    dim3 grid(rows);
    softmax_rows<<<grid, block>>>(d_x, d_y, rows, cols);
    CUDA_CHECK(cudaGetLastError());
    log_softmax_rows<<<grid, block>>>(d_x, d_logy, rows, cols);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_y.data(), d_y, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_logy.data(), d_logy, bytes, cudaMemcpyDeviceToHost));

    // Every softmax row must sum to one.
    double worst = 0.0;
    for (int r = 0; r < rows; ++r) {
        double s = 0.0;
        for (int c = 0; c < cols; ++c) s += h_y[(size_t)r * cols + c];
        worst = fmax(worst, fabs(s - 1.0));
    }
    printf("softmax_rows: max |row sum - 1| = %g\n", worst);
    printf("log_softmax_rows: y[0] = %f (log of %f)\n", h_logy[0], h_y[0]);

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_logy));
    return 0;
}
