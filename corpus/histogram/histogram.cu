// histogram.cu - histograms with privatised shared-memory bins.
//
//   histogram256Shared  : 256-bin byte histogram (e.g. of an 8-bit image). Each
//                         block counts into its own shared copy of the bins with
//                         shared atomics, then merges the non-zero bins into the
//                         global histogram with one global atomicAdd per bin.
//   histogramFloatRange : numBins equal-width bins over [lo, lo + numBins/invBinWidth);
//                         samples outside the range are dropped. The private bins
//                         live in dynamic shared memory sized numBins * 4 bytes.
//
// Both kernels add into `bins`; the caller zeroes it before the first launch.

#include <cstdio>
#include <cstdlib>
#include <cstdint>
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

#define NUM_BINS     256
#define HIST_THREADS 256
#define HIST_BLOCKS  64

__global__ void histogram256Shared(const unsigned char* __restrict__ data,
                                   unsigned int* __restrict__ bins,
                                   size_t n)
{
    __shared__ unsigned int sBins[NUM_BINS];

    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        sBins[b] = 0u;
    }
    __syncthreads();

    const size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        atomicAdd(&sBins[data[i]], 1u);
    }
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        const unsigned int count = sBins[b];
        if (count != 0u) {
            atomicAdd(&bins[b], count);
        }
    }
}

__global__ void histogramFloatRange(const float* __restrict__ x,
                                    unsigned int* __restrict__ bins,
                                    int n, int numBins,
                                    float lo, float invBinWidth)
{
    extern __shared__ unsigned int sHist[];

    for (int b = threadIdx.x; b < numBins; b += blockDim.x) {
        sHist[b] = 0u;
    }
    __syncthreads();

    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        const float v = x[i];
        if (v >= lo) {
            const int bin = (int)((v - lo) * invBinWidth);
            if (bin < numBins) {
                atomicAdd(&sHist[bin], 1u);
            }
        }
    }
    __syncthreads();

    for (int b = threadIdx.x; b < numBins; b += blockDim.x) {
        if (sHist[b] != 0u) {
            atomicAdd(&bins[b], sHist[b]);
        }
    }
}

int main()
{
    // ---- byte histogram ----------------------------------------------------
    const size_t n = 700001;
    std::vector<unsigned char> hData(n);
    for (size_t i = 0; i < n; ++i) hData[i] = (unsigned char)((i * 31u + (i >> 7)) & 0xFF);

    unsigned char* dData;
    unsigned int* dBins;
    CUDA_CHECK(cudaMalloc(&dData, n));
    CUDA_CHECK(cudaMalloc(&dBins, NUM_BINS * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemcpy(dData, hData.data(), n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dBins, 0, NUM_BINS * sizeof(unsigned int)));

    histogram256Shared<<<HIST_BLOCKS, HIST_THREADS>>>(dData, dBins, n);
    CUDA_CHECK(cudaGetLastError());

    std::vector<unsigned int> hBins(NUM_BINS);
    CUDA_CHECK(cudaMemcpy(hBins.data(), dBins, NUM_BINS * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    std::vector<unsigned int> ref(NUM_BINS, 0u);
    for (size_t i = 0; i < n; ++i) ref[hData[i]]++;
    int bad = 0;
    for (int b = 0; b < NUM_BINS; ++b) bad += (hBins[b] != ref[b]);
    printf("histogram256Shared: %d wrong bins\n", bad);

    // ---- float histogram over [-1, 1) with 100 bins ------------------------
    const int nf = 200000;
    const int numBins = 100;
    const float lo = -1.0f, hi = 1.0f;
    const float invBinWidth = (float)numBins / (hi - lo);
    std::vector<float> hX(nf);
    for (int i = 0; i < nf; ++i) hX[i] = 2.4f * (float)rand() / (float)RAND_MAX - 1.2f;

    float* dX;
    unsigned int* dFBins;
    CUDA_CHECK(cudaMalloc(&dX, nf * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dFBins, numBins * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemcpy(dX, hX.data(), nf * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dFBins, 0, numBins * sizeof(unsigned int)));

    const size_t shmem = numBins * sizeof(unsigned int);
    histogramFloatRange<<<120, 256, shmem>>>(dX, dFBins, nf, numBins, lo, invBinWidth);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<unsigned int> hFBins(numBins);
    CUDA_CHECK(cudaMemcpy(hFBins.data(), dFBins, numBins * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    unsigned long long inRange = 0;
    for (int b = 0; b < numBins; ++b) inRange += hFBins[b];
    printf("histogramFloatRange: %llu of %d samples in range\n", inRange, nf);

    CUDA_CHECK(cudaFree(dData));
    CUDA_CHECK(cudaFree(dBins));
    CUDA_CHECK(cudaFree(dX));
    CUDA_CHECK(cudaFree(dFBins));
    return bad ? EXIT_FAILURE : EXIT_SUCCESS;
}
