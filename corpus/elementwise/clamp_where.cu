// clamp_where.cu - branchy pointwise selection kernels.
//
//   clampRange  : out = min(max(x, lo), hi), written with nested ternaries
//   selectWhere : out = mask ? a : b  (numpy.where / torch.where semantics)

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

__global__ void clampRange(const float* __restrict__ in, float* __restrict__ out,
                           int n, float lo, float hi)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float v = in[i];
    out[i] = (v < lo) ? lo : ((v > hi) ? hi : v);
}

__global__ void selectWhere(const unsigned char* __restrict__ mask,
                            const float* __restrict__ a,
                            const float* __restrict__ b,
                            float* __restrict__ out,
                            int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = mask[i] ? a[i] : b[i];
    }
}

int main()
{
    const int nClamp = 30000;
    const int nWhere = 25001;
    const float lo = -0.5f, hi = 0.75f;

    std::vector<float> hX(nClamp), hY(nClamp);
    std::vector<unsigned char> hMask(nWhere);
    for (int i = 0; i < nClamp; ++i) hX[i] = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    for (int i = 0; i < nWhere; ++i) hMask[i] = (unsigned char)(rand() & 1);

    float *dX, *dY, *dOut;
    unsigned char* dMask;
    CUDA_CHECK(cudaMalloc(&dX, nClamp * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dY, nClamp * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dOut, nClamp * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dMask, nWhere));
    CUDA_CHECK(cudaMemcpy(dX, hX.data(), nClamp * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dMask, hMask.data(), nWhere, cudaMemcpyHostToDevice));

    clampRange<<<(nClamp + 255) / 256, 256>>>(dX, dY, nClamp, lo, hi);
    CUDA_CHECK(cudaGetLastError());

    // where(mask, clamped, original)
    selectWhere<<<(nWhere + 127) / 128, 128>>>(dMask, dY, dX, dOut, nWhere);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(hY.data(), dOut, nWhere * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < nWhere; ++i) {
        float c = hX[i] < lo ? lo : (hX[i] > hi ? hi : hX[i]);
        if (hY[i] != (hMask[i] ? c : hX[i])) ++bad;
    }
    printf("clamp/where mismatches: %d\n", bad);

    CUDA_CHECK(cudaFree(dX));
    CUDA_CHECK(cudaFree(dY));
    CUDA_CHECK(cudaFree(dOut));
    CUDA_CHECK(cudaFree(dMask));
    return bad ? EXIT_FAILURE : EXIT_SUCCESS;
}
