// stencil3d.cu - 7-point stencils on a 3-D grid stored x-fastest: idx = (z*ny + y)*nx + x.
//
//   heat3dStepZLoop : explicit heat-equation step, u' = u + alpha * lap(u).
//                     A 2-D grid of 32x8 blocks covers the x-y plane and each
//                     thread marches along z.
//   stencil7ptGrid3d: generic weighted 7-point stencil, out = c0*u + c1*(sum of
//                     the 6 face neighbours), with one thread per point from a
//                     3-D grid of 8x8x4 blocks.
//
// Only interior points are written; the outer shell of `out` keeps its contents.

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

#define ZLOOP_BX 32
#define ZLOOP_BY 8
#define G3_BX 8
#define G3_BY 8
#define G3_BZ 4

__device__ __forceinline__ float faceSum(const float* __restrict__ u, size_t idx, int nx, size_t plane)
{
    return u[idx - 1] + u[idx + 1] + u[idx - nx] + u[idx + nx] + u[idx - plane] + u[idx + plane];
}

__global__ void heat3dStepZLoop(const float* __restrict__ in, float* __restrict__ out,
                                int nx, int ny, int nz, float alpha)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || x >= nx - 1 || y < 1 || y >= ny - 1) return;

    const size_t plane = (size_t)nx * ny;
    for (int z = 1; z < nz - 1; ++z) {
        const size_t idx = (size_t)z * plane + (size_t)y * nx + x;
        const float c = in[idx];
        const float lap = faceSum(in, idx, nx, plane) - 6.0f * c;
        out[idx] = c + alpha * lap;
    }
}

__global__ void stencil7ptGrid3d(const float* __restrict__ in, float* __restrict__ out,
                                 int nx, int ny, int nz, float c0, float c1)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int z = blockIdx.z * blockDim.z + threadIdx.z;

    const bool interior = x > 0 && x < nx - 1 && y > 0 && y < ny - 1 && z > 0 && z < nz - 1;
    if (!interior) return;

    const size_t plane = (size_t)nx * ny;
    const size_t idx = (size_t)z * plane + (size_t)y * nx + x;
    out[idx] = c0 * in[idx] + c1 * faceSum(in, idx, nx, plane);
}

int main()
{
    const int nx = 70, ny = 50, nz = 40;
    const size_t count = (size_t)nx * ny * nz;
    const size_t bytes = count * sizeof(float);
    const float alpha = 0.05f;   // stable: alpha <= 1/6

    std::vector<float> hU(count);
    for (int z = 0; z < nz; ++z)
        for (int y = 0; y < ny; ++y)
            for (int x = 0; x < nx; ++x)
                hU[((size_t)z * ny + y) * nx + x] = 1.0f + 0.5f * sinf(0.1f * x) * cosf(0.2f * y + 0.3f * z);

    float *dA, *dB;
    CUDA_CHECK(cudaMalloc(&dA, bytes));
    CUDA_CHECK(cudaMalloc(&dB, bytes));
    CUDA_CHECK(cudaMemcpy(dA, hU.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, hU.data(), bytes, cudaMemcpyHostToDevice));   // shared boundary

    const dim3 zBlock(ZLOOP_BX, ZLOOP_BY);
    const dim3 zGrid((nx + ZLOOP_BX - 1) / ZLOOP_BX, (ny + ZLOOP_BY - 1) / ZLOOP_BY);
    for (int step = 0; step < 10; ++step) {
        const float* src = (step % 2 == 0) ? dA : dB;
        float* dst = (step % 2 == 0) ? dB : dA;
        heat3dStepZLoop<<<zGrid, zBlock>>>(src, dst, nx, ny, nz, alpha);
        CUDA_CHECK(cudaGetLastError());
    }

    const dim3 gBlock(G3_BX, G3_BY, G3_BZ);
    const dim3 gGrid((nx + G3_BX - 1) / G3_BX, (ny + G3_BY - 1) / G3_BY, (nz + G3_BZ - 1) / G3_BZ);
    stencil7ptGrid3d<<<gGrid, gBlock>>>(dA, dB, nx, ny, nz, 0.4f, 0.1f);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(hU.data(), dB, bytes, cudaMemcpyDeviceToHost));
    double total = 0.0;
    for (size_t i = 0; i < count; ++i) total += hU[i];
    printf("stencil3d checksum %.6f\n", total);

    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    return 0;
}
