// transpose.cu - out-of-place matrix transpose, naive and shared-memory tiled.
//
// in is rows x cols (row-major), out is cols x rows (row-major).
//
//   transposeNaive : reads coalesced, writes strided by `rows`
//   transposeTiled : stages a 32x32 tile in shared memory so both the global
//                    read and the global write are coalesced. The tile row is
//                    padded to 33 floats so that reading a tile column touches
//                    32 different banks. Each 32x8 block loops over the tile in
//                    4 row strips (TILE_DIM / BLOCK_ROWS).

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

#define TILE_DIM   32
#define BLOCK_ROWS 8
#define NAIVE_BLOCK 16

__global__ void transposeNaive(const float* __restrict__ in, float* __restrict__ out,
                               int rows, int cols)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        out[(size_t)col * rows + row] = in[(size_t)row * cols + col];
    }
}

__global__ void transposeTiled(const float* __restrict__ in, float* __restrict__ out,
                               int rows, int cols)
{
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];   // +1: avoid bank conflicts on the column read

    // load: tile (blockIdx.y, blockIdx.x) of the input
    int x = blockIdx.x * TILE_DIM + threadIdx.x;     // input column
    int y = blockIdx.y * TILE_DIM + threadIdx.y;     // input row
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < cols && (y + j) < rows) {
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
        }
    }

    __syncthreads();

    // store: the same tile lands at (blockIdx.x, blockIdx.y) of the output
    x = blockIdx.y * TILE_DIM + threadIdx.x;         // output column == input row
    y = blockIdx.x * TILE_DIM + threadIdx.y;         // output row    == input column
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < rows && (y + j) < cols) {
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}

static int checkTranspose(const std::vector<float>& in, const std::vector<float>& out,
                          int rows, int cols)
{
    int bad = 0;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            bad += out[(size_t)c * rows + r] != in[(size_t)r * cols + c];
    return bad;
}

int main()
{
    const int rows = 300, cols = 450;
    const size_t count = (size_t)rows * cols;
    const size_t bytes = count * sizeof(float);

    std::vector<float> hIn(count), hOut(count);
    for (size_t i = 0; i < count; ++i) hIn[i] = (float)i;

    float *dIn, *dOut;
    CUDA_CHECK(cudaMalloc(&dIn, bytes));
    CUDA_CHECK(cudaMalloc(&dOut, bytes));
    CUDA_CHECK(cudaMemcpy(dIn, hIn.data(), bytes, cudaMemcpyHostToDevice));

    dim3 nBlock(NAIVE_BLOCK, NAIVE_BLOCK);
    dim3 nGrid((cols + NAIVE_BLOCK - 1) / NAIVE_BLOCK, (rows + NAIVE_BLOCK - 1) / NAIVE_BLOCK);
    transposeNaive<<<nGrid, nBlock>>>(dIn, dOut, rows, cols);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(hOut.data(), dOut, bytes, cudaMemcpyDeviceToHost));
    printf("transposeNaive mismatches: %d\n", checkTranspose(hIn, hOut, rows, cols));

    CUDA_CHECK(cudaMemset(dOut, 0, bytes));
    dim3 tBlock(TILE_DIM, BLOCK_ROWS);
    dim3 tGrid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
    transposeTiled<<<tGrid, tBlock>>>(dIn, dOut, rows, cols);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hOut.data(), dOut, bytes, cudaMemcpyDeviceToHost));
    const int bad = checkTranspose(hIn, hOut, rows, cols);
    printf("transposeTiled mismatches: %d\n", bad);

    CUDA_CHECK(cudaFree(dIn));
    CUDA_CHECK(cudaFree(dOut));
    return bad ? EXIT_FAILURE : EXIT_SUCCESS;
}
