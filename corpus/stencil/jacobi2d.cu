// jacobi2d.cu - one Jacobi sweep for the 2-D Poisson problem  -lap(u) = f.
//
// On a uniform grid with spacing h the update for each interior point is
//
//   uNew[j][i] = 0.25 * (u[j][i-1] + u[j][i+1] + u[j-1][i] + u[j+1][i] + h^2 * f[j][i])
//
// Boundary points hold Dirichlet values and are never written: the host keeps
// them identical in both buffers and ping-pongs u/uNew between sweeps.

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

#define BLOCK_DIM_X 16
#define BLOCK_DIM_Y 16

__global__ void jacobiStep(const float* __restrict__ u,
                           float* __restrict__ uNew,
                           const float* __restrict__ f,
                           int nx, int ny, float h2)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;   // x index (fastest)
    const int j = blockIdx.y * blockDim.y + threadIdx.y;   // y index

    if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1) {
        const int idx = j * nx + i;
        uNew[idx] = 0.25f * (u[idx - 1] + u[idx + 1] + u[idx - nx] + u[idx + nx] + h2 * f[idx]);
    }
}

int main()
{
    const int nx = 257, ny = 190;
    const int iterations = 100;
    const float h = 1.0f / (float)(nx - 1);
    const size_t count = (size_t)nx * ny;
    const size_t bytes = count * sizeof(float);

    std::vector<float> hU(count, 0.0f), hF(count, 1.0f);
    for (int i = 0; i < nx; ++i) hU[i] = 1.0f;   // hot top edge

    float *dU, *dUNew, *dF;
    CUDA_CHECK(cudaMalloc(&dU, bytes));
    CUDA_CHECK(cudaMalloc(&dUNew, bytes));
    CUDA_CHECK(cudaMalloc(&dF, bytes));
    CUDA_CHECK(cudaMemcpy(dU, hU.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dUNew, hU.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dF, hF.data(), bytes, cudaMemcpyHostToDevice));

    const dim3 block(BLOCK_DIM_X, BLOCK_DIM_Y);
    const dim3 grid((nx + block.x - 1) / block.x, (ny + block.y - 1) / block.y);
    for (int it = 0; it < iterations; ++it) {
        jacobiStep<<<grid, block>>>(dU, dUNew, dF, nx, ny, h * h);
        CUDA_CHECK(cudaGetLastError());
        float* tmp = dU;   // ping-pong
        dU = dUNew;
        dUNew = tmp;
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hU.data(), dU, bytes, cudaMemcpyDeviceToHost));
    printf("u at centre after %d sweeps: %f\n", iterations, hU[(ny / 2) * nx + nx / 2]);

    CUDA_CHECK(cudaFree(dU));
    CUDA_CHECK(cudaFree(dUNew));
    CUDA_CHECK(cudaFree(dF));
    return 0;
}
