/* cublas_v2.h -- cuBLAS, the calls benchmarks compare kernels against (cuda2tile parse stub). */
#ifndef __CUDA2TILE_CUBLAS_V2_H
#define __CUDA2TILE_CUBLAS_V2_H
/* the include-guard name code tests to see whether this header was included */
#define CUBLAS_V2_H_
#define CUBLAS_API_H_
#pragma clang system_header
#include <driver_types.h>
#include <library_types.h>
#include <cuComplex.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
typedef struct cublasContext *cublasHandle_t;
typedef enum {
  CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_NOT_INITIALIZED = 1, CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7, CUBLAS_STATUS_ARCH_MISMATCH = 8, CUBLAS_STATUS_MAPPING_ERROR = 11,
  CUBLAS_STATUS_EXECUTION_FAILED = 13, CUBLAS_STATUS_INTERNAL_ERROR = 14, CUBLAS_STATUS_NOT_SUPPORTED = 15,
  CUBLAS_STATUS_LICENSE_ERROR = 16
} cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 } cublasOperation_t;
typedef enum { CUBLAS_FILL_MODE_LOWER = 0, CUBLAS_FILL_MODE_UPPER = 1, CUBLAS_FILL_MODE_FULL = 2 } cublasFillMode_t;
typedef enum { CUBLAS_DIAG_NON_UNIT = 0, CUBLAS_DIAG_UNIT = 1 } cublasDiagType_t;
typedef enum { CUBLAS_SIDE_LEFT = 0, CUBLAS_SIDE_RIGHT = 1 } cublasSideMode_t;
typedef enum { CUBLAS_POINTER_MODE_HOST = 0, CUBLAS_POINTER_MODE_DEVICE = 1 } cublasPointerMode_t;
typedef enum {
  CUBLAS_DEFAULT_MATH = 0, CUBLAS_TENSOR_OP_MATH = 1, CUBLAS_PEDANTIC_MATH = 2, CUBLAS_TF32_TENSOR_OP_MATH = 3
} cublasMath_t;
typedef enum {
  CUBLAS_COMPUTE_16F = 64, CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_FAST_16F = 74,
  CUBLAS_COMPUTE_32F_FAST_16BF = 75, CUBLAS_COMPUTE_32F_FAST_TF32 = 77, CUBLAS_COMPUTE_64F = 70,
  CUBLAS_COMPUTE_32I = 72
} cublasComputeType_t;
typedef enum { CUBLAS_GEMM_DEFAULT = -1, CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99 } cublasGemmAlgo_t;
typedef cudaDataType cublasDataType_t;
extern "C" {
cublasStatus_t cublasCreate(cublasHandle_t *handle);
cublasStatus_t cublasDestroy(cublasHandle_t handle);
cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t streamId);
cublasStatus_t cublasGetStream(cublasHandle_t handle, cudaStream_t *streamId);
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode);
cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode);
cublasStatus_t cublasGetVersion(cublasHandle_t handle, int *version);
const char *cublasGetStatusString(cublasStatus_t status);
const char *cublasGetStatusName(cublasStatus_t status);
#define __C2T_BLAS1(p, T)                                                                      \
  cublasStatus_t cublas##p##axpy(cublasHandle_t h, int n, const T *alpha, const T *x, int incx, T *y, int incy); \
  cublasStatus_t cublas##p##scal(cublasHandle_t h, int n, const T *alpha, T *x, int incx);     \
  cublasStatus_t cublas##p##copy(cublasHandle_t h, int n, const T *x, int incx, T *y, int incy); \
  cublasStatus_t cublas##p##dot(cublasHandle_t h, int n, const T *x, int incx, const T *y, int incy, T *result); \
  cublasStatus_t cublas##p##nrm2(cublasHandle_t h, int n, const T *x, int incx, T *result);    \
  cublasStatus_t cublas##p##asum(cublasHandle_t h, int n, const T *x, int incx, T *result);    \
  cublasStatus_t cublas##p##gemv(cublasHandle_t h, cublasOperation_t trans, int m, int n, const T *alpha, \
                                 const T *A, int lda, const T *x, int incx, const T *beta, T *y, int incy); \
  cublasStatus_t cublas##p##gemm(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int m, \
                                 int n, int k, const T *alpha, const T *A, int lda, const T *B, int ldb, \
                                 const T *beta, T *C, int ldc);                                \
  cublasStatus_t cublas##p##gemmStridedBatched(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, \
                                 int m, int n, int k, const T *alpha, const T *A, int lda, long long strideA, \
                                 const T *B, int ldb, long long strideB, const T *beta, T *C, int ldc, \
                                 long long strideC, int batchCount);                         \
  cublasStatus_t cublas##p##gemmBatched(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, \
                                 int m, int n, int k, const T *alpha, const T *const Aarray[], int lda, \
                                 const T *const Barray[], int ldb, const T *beta, T *const Carray[], int ldc, \
                                 int batchCount);
__C2T_BLAS1(S, float)
__C2T_BLAS1(D, double)
#undef __C2T_BLAS1
cublasStatus_t cublasIsamax(cublasHandle_t h, int n, const float *x, int incx, int *result);
cublasStatus_t cublasIsamin(cublasHandle_t h, int n, const float *x, int incx, int *result);
cublasStatus_t cublasSgeam(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                           const float *alpha, const float *A, int lda, const float *beta, const float *B, int ldb,
                           float *C, int ldc);
cublasStatus_t cublasHgemm(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                           const __half *alpha, const __half *A, int lda, const __half *B, int ldb,
                           const __half *beta, __half *C, int ldc);
cublasStatus_t cublasCgemm(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                           const cuComplex *alpha, const cuComplex *A, int lda, const cuComplex *B, int ldb,
                           const cuComplex *beta, cuComplex *C, int ldc);
cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                            const void *alpha, const void *A, cudaDataType Atype, int lda, const void *B,
                            cudaDataType Btype, int ldb, const void *beta, void *C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t algo);
cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int m,
                                          int n, int k, const void *alpha, const void *A, cudaDataType Atype, int lda,
                                          long long strideA, const void *B, cudaDataType Btype, int ldb,
                                          long long strideB, const void *beta, void *C, cudaDataType Ctype, int ldc,
                                          long long strideC, int batchCount, cublasComputeType_t computeType,
                                          cublasGemmAlgo_t algo);
}
#endif
