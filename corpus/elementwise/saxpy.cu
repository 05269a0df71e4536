// saxpy.cu - single-precision a*x + y with a grid-stride loop.
//
// The grid is sized to a fixed number of blocks rather than to n, so each
// thread walks the array in strides of the whole grid.

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

#define SAXPY_THREADS 256
#define SAXPY_BLOCKS  160   // a few waves on current parts; the loop covers the rest

__global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = a * x[i] + y[i];
    }
}

int main(int argc, char** argv)
{
    const int n = (argc > 1) ? atoi(argv[1]) : 300001;
    const float a = 2.5f;
    const size_t bytes = (size_t)n * sizeof(float);

    std::vector<float> hx(n), hy(n), hRef(n);
    for (int i = 0; i < n; ++i) {
        hx[i] = (float)(i % 1000) / 1000.0f;
        hy[i] = (float)((i * 7) % 1000) / 1000.0f;
        hRef[i] = a * hx[i] + hy[i];
    }

    float *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, bytes));
    CUDA_CHECK(cudaMalloc(&dy, bytes));
    CUDA_CHECK(cudaMemcpy(dx, hx.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dy, hy.data(), bytes, cudaMemcpyHostToDevice));

    saxpy<<<SAXPY_BLOCKS, SAXPY_THREADS>>>(n, a, dx, dy);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hy.data(), dy, bytes, cudaMemcpyDeviceToHost));

    float maxErr = 0.0f;
    for (int i = 0; i < n; ++i) maxErr = fmaxf(maxErr, fabsf(hy[i] - hRef[i]));
    printf("saxpy n=%d max abs error %g\n", n, maxErr);

    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
    return 0;
}
