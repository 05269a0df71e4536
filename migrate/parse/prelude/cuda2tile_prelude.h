#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ __inline__ __attribute__((always_inline))
typedef unsigned long size_t;
struct uint3 { unsigned x, y, z; };
struct dim3 { unsigned x, y, z; __host__ __device__ dim3(unsigned x=1, unsigned y=1, unsigned z=1) : x(x), y(y), z(z) {} };
extern const __device__ uint3 threadIdx; extern const __device__ uint3 blockIdx; extern const __device__ dim3 blockDim; extern const __device__ dim3 gridDim;
typedef struct CUstream_st *cudaStream_t;
extern "C" int __cudaPushCallConfiguration(dim3 g, dim3 b, size_t s = 0, cudaStream_t st = 0);
extern "C" __device__ float expf(float);
