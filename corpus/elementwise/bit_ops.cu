// bit_ops.cu - unsigned integer bit manipulation.
//
//   hashKeys    : MurmurHash3 32-bit finaliser (fmix32) of key ^ seed
//   bitFeatures : per-word population count, plus a packed word holding
//                 leading-zero count, parity and a 7-bit left rotation

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

#define ROTATE_BITS   7u
#define LOW25_MASK    0x01FFFFFFu

__host__ __device__ __forceinline__ unsigned int fmix32(unsigned int h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

__device__ __forceinline__ unsigned int rotl32(unsigned int x, unsigned int r)
{
    return (x << r) | (x >> (32u - r));
}

__global__ void hashKeys(const unsigned int* __restrict__ keys,
                         unsigned int* __restrict__ hashes,
                         unsigned int seed,
                         unsigned int n)
{
    const unsigned int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) {
        hashes[idx] = fmix32(keys[idx] ^ seed);
    }
}

__global__ void bitFeatures(const unsigned int* __restrict__ words,
                            unsigned int* __restrict__ popcounts,
                            unsigned int* __restrict__ packed,
                            int n)
{
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n) return;

    const unsigned int w = words[idx];
    const unsigned int ones = (unsigned int)__popc(w);
    const unsigned int lz = (unsigned int)__clz((int)w);   // 32 when w == 0
    const unsigned int parity = ones & 1u;
    const unsigned int rot = rotl32(w, ROTATE_BITS);

    popcounts[idx] = ones;
    packed[idx] = (lz << 26) | (parity << 25) | (rot & LOW25_MASK);
}

int main()
{
    const unsigned int nKeys = 70001;
    const int nWords = 33333;
    const unsigned int seed = 0x9e3779b9u;

    std::vector<unsigned int> hKeys(nKeys), hHash(nKeys);
    for (unsigned int i = 0; i < nKeys; ++i) hKeys[i] = i * 2654435761u;

    unsigned int *dKeys, *dHash, *dPop, *dPacked;
    CUDA_CHECK(cudaMalloc(&dKeys, nKeys * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&dHash, nKeys * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&dPop, nWords * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&dPacked, nWords * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemcpy(dKeys, hKeys.data(), nKeys * sizeof(unsigned int), cudaMemcpyHostToDevice));

    const unsigned int threads = 256;
    hashKeys<<<(nKeys + threads - 1) / threads, threads>>>(dKeys, dHash, seed, nKeys);
    CUDA_CHECK(cudaGetLastError());

    // features of the first nWords keys, with 192-thread blocks
    bitFeatures<<<(nWords + 191) / 192, 192>>>(dKeys, dPop, dPacked, nWords);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(hHash.data(), dHash, nKeys * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    unsigned int bad = 0;
    for (unsigned int i = 0; i < nKeys; ++i) bad += (hHash[i] != fmix32(hKeys[i] ^ seed));
    printf("hashKeys mismatches: %u\n", bad);

    CUDA_CHECK(cudaFree(dKeys));
    CUDA_CHECK(cudaFree(dHash));
    CUDA_CHECK(cudaFree(dPop));
    CUDA_CHECK(cudaFree(dPacked));
    return bad ? EXIT_FAILURE : EXIT_SUCCESS;
}
