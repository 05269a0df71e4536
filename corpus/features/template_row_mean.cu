// Templated row-mean reduction, instantiated for (float, 128) and (double, 256).
//
// BLOCK is a compile-time block size: it sizes the shared buffer and lets the
// tree reduction unroll completely.
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

template <typename T, int BLOCK>
__global__ void row_mean(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    static_assert((BLOCK & (BLOCK - 1)) == 0, "BLOCK must be a power of two");
    __shared__ T s_buf[BLOCK];

    const int row = blockIdx.x;
    if (row >= rows) return;
    const T* src = in + (size_t)row * cols;

    T acc = T(0);
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        acc += src[c];
    s_buf[threadIdx.x] = acc;
    __syncthreads();

#pragma unroll
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride)
            s_buf[threadIdx.x] += s_buf[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[row] = s_buf[0] / static_cast<T>(cols);
}

template <typename T, int BLOCK>
static void run_row_mean(int rows, int cols, unsigned seed)
{
    std::vector<T> h_in((size_t)rows * cols), h_out(rows);
    srand(seed);
    for (auto& v : h_in) v = static_cast<T>(rand()) / static_cast<T>(RAND_MAX) * T(4) - T(1);

    T *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, h_in.size() * sizeof(T)));
    CUDA_CHECK(cudaMalloc(&d_out, rows * sizeof(T)));
    CUDA_CHECK(cudaMemcpy(d_in, h_in.data(), h_in.size() * sizeof(T), cudaMemcpyHostToDevice));

    row_mean<T, BLOCK><<<rows, BLOCK>>>(d_in, d_out, rows, cols);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h_out.data(), d_out, rows * sizeof(T), cudaMemcpyDeviceToHost));
    printf("row_mean<%zu-byte, %d>: out[0] = %f\n", sizeof(T), BLOCK, (double)h_out[0]);

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
}

int main()
{
    run_row_mean<float, 128>(40, 500, 1u);
    run_row_mean<double, 256>(25, 1000, 2u);
    return 0;
}
