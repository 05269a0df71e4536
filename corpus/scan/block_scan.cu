// block_scan.cu - building blocks of a three-phase device-wide prefix sum.
//
//   blockScanInclusiveHS       : Hillis-Steele inclusive scan of each 256-element
//                                segment (float), double-buffered in shared memory;
//                                also writes each segment's total.
//   blockScanExclusiveBlelloch : Blelloch (up-sweep / down-sweep) exclusive scan of
//                                each 256-element segment (uint32), two elements per
//                                thread; writes each segment's total.
//   addBlockOffsets            : adds the scanned segment totals back so the segment
//                                scans become one scan of the whole array.
//
// Segments are scanned independently: elements past n count as zero.

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

#define HS_BLOCK        256                      // threads == elements per segment
#define BLELLOCH_THREADS 128
#define BLELLOCH_ELEMS  (2 * BLELLOCH_THREADS)   // elements per segment

__global__ void blockScanInclusiveHS(const float* __restrict__ in,
                                     float* __restrict__ out,
                                     float* __restrict__ blockSums,
                                     int n)
{
    __shared__ float buf[2][HS_BLOCK];

    const int tid = threadIdx.x;
    const int gid = blockIdx.x * HS_BLOCK + tid;

    int pout = 0, pin = 1;
    buf[pout][tid] = (gid < n) ? in[gid] : 0.0f;
    __syncthreads();

    for (int offset = 1; offset < HS_BLOCK; offset <<= 1) {
        pout = 1 - pout;   // swap the roles of the two buffers
        pin = 1 - pout;
        if (tid >= offset) {
            buf[pout][tid] = buf[pin][tid] + buf[pin][tid - offset];
        } else {
            buf[pout][tid] = buf[pin][tid];
        }
        __syncthreads();
    }

    if (gid < n) {
        out[gid] = buf[pout][tid];
    }
    if (tid == HS_BLOCK - 1) {
        blockSums[blockIdx.x] = buf[pout][tid];
    }
}

__global__ void blockScanExclusiveBlelloch(const unsigned int* __restrict__ in,
                                           unsigned int* __restrict__ out,
                                           unsigned int* __restrict__ blockSums,
                                           int n)
{
    __shared__ unsigned int temp[BLELLOCH_ELEMS];

    const int tid = threadIdx.x;
    const int base = blockIdx.x * BLELLOCH_ELEMS;
    const int ai = tid;
    const int bi = tid + BLELLOCH_THREADS;

    temp[ai] = (base + ai < n) ? in[base + ai] : 0u;
    temp[bi] = (base + bi < n) ? in[base + bi] : 0u;

    // up-sweep (reduce): build partial sums in place
    int offset = 1;
    for (int d = BLELLOCH_ELEMS >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (tid < d) {
            const int a = offset * (2 * tid + 1) - 1;
            const int b = offset * (2 * tid + 2) - 1;
            temp[b] += temp[a];
        }
        offset <<= 1;
    }

    // the root holds the segment total; clear it for the exclusive scan
    if (tid == 0) {
        blockSums[blockIdx.x] = temp[BLELLOCH_ELEMS - 1];
        temp[BLELLOCH_ELEMS - 1] = 0u;
    }

    // down-sweep: push prefixes back down the tree
    for (int d = 1; d < BLELLOCH_ELEMS; d <<= 1) {
        offset >>= 1;
        __syncthreads();
        if (tid < d) {
            const int a = offset * (2 * tid + 1) - 1;
            const int b = offset * (2 * tid + 2) - 1;
            const unsigned int t = temp[a];
            temp[a] = temp[b];
            temp[b] += t;
        }
    }
    __syncthreads();

    if (base + ai < n) out[base + ai] = temp[ai];
    if (base + bi < n) out[base + bi] = temp[bi];
}

__global__ void addBlockOffsets(unsigned int* __restrict__ data,
                                const unsigned int* __restrict__ blockOffsets,
                                int n)
{
    const unsigned int offset = blockOffsets[blockIdx.x];
    const int base = blockIdx.x * BLELLOCH_ELEMS;
    for (int k = threadIdx.x; k < BLELLOCH_ELEMS; k += blockDim.x) {
        const int i = base + k;
        if (i < n) {
            data[i] += offset;
        }
    }
}

int main()
{
    // ---- float inclusive segment scans ------------------------------------
    const int nf = 100000;
    const int hsBlocks = (nf + HS_BLOCK - 1) / HS_BLOCK;
    std::vector<float> hIn(nf, 1.0f);

    float *dIn, *dOut, *dSums;
    CUDA_CHECK(cudaMalloc(&dIn, nf * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dOut, nf * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dSums, hsBlocks * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dIn, hIn.data(), nf * sizeof(float), cudaMemcpyHostToDevice));
    blockScanInclusiveHS<<<hsBlocks, HS_BLOCK>>>(dIn, dOut, dSums, nf);
    CUDA_CHECK(cudaGetLastError());

    // ---- full exclusive scan of uint32 counts -------------------------------
    // level 0 scans segments, level 1 scans the segment totals (they fit in one
    // segment as long as n <= BLELLOCH_ELEMS^2), then the offsets are added back.
    const int n = 50000;
    const int blocks = (n + BLELLOCH_ELEMS - 1) / BLELLOCH_ELEMS;
    if (blocks > BLELLOCH_ELEMS) {
        fprintf(stderr, "n too large for a two-level scan\n");
        return EXIT_FAILURE;
    }
    std::vector<unsigned int> hCounts(n);
    for (int i = 0; i < n; ++i) hCounts[i] = (unsigned int)(i % 7);

    unsigned int *dCounts, *dScan, *dTotals, *dTotalsScan, *dGrand;
    CUDA_CHECK(cudaMalloc(&dCounts, n * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&dScan, n * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&dTotals, blocks * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&dTotalsScan, blocks * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&dGrand, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemcpy(dCounts, hCounts.data(), n * sizeof(unsigned int), cudaMemcpyHostToDevice));

    blockScanExclusiveBlelloch<<<blocks, BLELLOCH_THREADS>>>(dCounts, dScan, dTotals, n);
    CUDA_CHECK(cudaGetLastError());
    blockScanExclusiveBlelloch<<<1, BLELLOCH_THREADS>>>(dTotals, dTotalsScan, dGrand, blocks);
    CUDA_CHECK(cudaGetLastError());
    addBlockOffsets<<<blocks, BLELLOCH_THREADS>>>(dScan, dTotalsScan, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<unsigned int> hScan(n);
    CUDA_CHECK(cudaMemcpy(hScan.data(), dScan, n * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    unsigned int running = 0;
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        bad += (hScan[i] != running);
        running += hCounts[i];
    }
    printf("exclusive scan mismatches: %d (total %u)\n", bad, running);

    CUDA_CHECK(cudaFree(dIn));
    CUDA_CHECK(cudaFree(dOut));
    CUDA_CHECK(cudaFree(dSums));
    CUDA_CHECK(cudaFree(dCounts));
    CUDA_CHECK(cudaFree(dScan));
    CUDA_CHECK(cudaFree(dTotals));
    CUDA_CHECK(cudaFree(dTotalsScan));
    CUDA_CHECK(cudaFree(dGrand));
    return bad ? EXIT_FAILURE : EXIT_SUCCESS;
}
