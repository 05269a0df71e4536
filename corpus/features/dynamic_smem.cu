// Kernels whose shared memory is sized at launch (extern __shared__).
//
//   moving_average_1d:   box filter of width 2*radius+1; each block stages its
//                        slice of the signal plus a halo of `radius` samples on
//                        each side (zero outside the signal).
//                        shared bytes = (blockDim.x + 2*radius) * sizeof(float)
//   row_scale_max_abs:   y = x / max|x| per row; the dynamic buffer is carved
//                        into a copy of the row and a reduction scratch area.
//                        shared bytes = (cols + blockDim.x) * sizeof(float)
#include <cuda_runtime.h>
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

__global__ void moving_average_1d(const float* __restrict__ in,
                                  float* __restrict__ out,
                                  int n, int radius)
{
    extern __shared__ float s_tile[];
    const int tile_len = blockDim.x + 2 * radius;
    const int base = blockIdx.x * blockDim.x - radius;   // global index of s_tile[0]

    // Every thread helps load, including those past the end of the signal.
    for (int j = threadIdx.x; j < tile_len; j += blockDim.x) {
        const int src = base + j;
        s_tile[j] = (src >= 0 && src < n) ? in[src] : 0.0f;
    }
    __syncthreads();

    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc = 0.0f;
        for (int k = 0; k <= 2 * radius; ++k)
            acc += s_tile[threadIdx.x + k];
        out[i] = acc / (float)(2 * radius + 1);
    }
}

__global__ void row_scale_max_abs(const float* __restrict__ x,
                                  float* __restrict__ y,
                                  int rows, int cols)
{
    extern __shared__ float smem[];
    float* s_row = smem;            // cols floats
    float* s_red = smem + cols;     // blockDim.x floats

    const int row = blockIdx.x;
    if (row >= rows) return;
    const float* xr = x + (size_t)row * cols;

    float local = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        const float v = xr[c];
        s_row[c] = v;
        local = fmaxf(local, fabsf(v));
    }
    s_red[threadIdx.x] = local;
    __syncthreads();

    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride)
            s_red[threadIdx.x] = fmaxf(s_red[threadIdx.x], s_red[threadIdx.x + stride]);
        __syncthreads();
    }
    const float max_abs = s_red[0];

    float* yr = y + (size_t)row * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = s_row[c] / max_abs;
}

int main()
{
    srand(4242);

    // --- moving average ---
    const int n = 5000, radius = 4, threads = 256;
    std::vector<float> h_in(n), h_out(n);
    for (auto& v : h_in) v = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    float *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, h_in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    const size_t smem_avg = (threads + 2 * radius) * sizeof(float);
    moving_average_1d<<<(n + threads - 1) / threads, threads, smem_avg>>>(d_in, d_out, n, radius);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(h_out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    printf("moving_average_1d: out[0] = %f\n", h_out[0]);

    // --- row scaling ---
    const int rows = 24, cols = 300, row_threads = 128;
    std::vector<float> h_x((size_t)rows * cols), h_y((size_t)rows * cols);
    for (auto& v : h_x) v = 10.0f * rand() / (float)RAND_MAX - 5.0f;
    float *d_x, *d_y;
    CUDA_CHECK(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, h_y.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    const size_t smem_row = (cols + row_threads) * sizeof(float);
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    row_scale_max_abs<<<rows, row_threads, smem_row, stream>>>(d_x, d_y, rows, cols);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(h_y.data(), d_y, h_y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    printf("row_scale_max_abs: y[0] = %f\n", h_y[0]);

    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    return 0;
}
