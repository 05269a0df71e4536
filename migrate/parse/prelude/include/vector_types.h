/* vector_types.h -- CUDA built-in vector types (cuda2tile parse stub). */
#ifndef __CUDA2TILE_VECTOR_TYPES_H
#define __CUDA2TILE_VECTOR_TYPES_H
/* the include-guard name code tests to see whether this header was included */
#define __VECTOR_TYPES_H__
#pragma clang system_header

/* ---- char1..4 ... double1..4: 2- and 4-element types carry CUDA's alignment ----------------- */
struct char1 { signed char x; }; struct __align__(2) char2 { signed char x, y; };
struct char3 { signed char x, y, z; }; struct __align__(4) char4 { signed char x, y, z, w; };
struct uchar1 { unsigned char x; }; struct __align__(2) uchar2 { unsigned char x, y; };
struct uchar3 { unsigned char x, y, z; }; struct __align__(4) uchar4 { unsigned char x, y, z, w; };
struct short1 { short x; }; struct __align__(4) short2 { short x, y; };
struct short3 { short x, y, z; }; struct __align__(8) short4 { short x, y, z, w; };
struct ushort1 { unsigned short x; }; struct __align__(4) ushort2 { unsigned short x, y; };
struct ushort3 { unsigned short x, y, z; }; struct __align__(8) ushort4 { unsigned short x, y, z, w; };
struct int1 { int x; }; struct __align__(8) int2 { int x, y; };
struct int3 { int x, y, z; }; struct __align__(16) int4 { int x, y, z, w; };
struct uint1 { unsigned int x; }; struct __align__(8) uint2 { unsigned int x, y; };
struct uint3 { unsigned int x, y, z; }; struct __align__(16) uint4 { unsigned int x, y, z, w; };
struct long1 { long int x; }; struct __align__(16) long2 { long int x, y; };
struct long3 { long int x, y, z; }; struct __align__(16) long4 { long int x, y, z, w; };
struct ulong1 { unsigned long int x; }; struct __align__(16) ulong2 { unsigned long int x, y; };
struct ulong3 { unsigned long int x, y, z; }; struct __align__(16) ulong4 { unsigned long int x, y, z, w; };
struct longlong1 { long long int x; }; struct __align__(16) longlong2 { long long int x, y; };
struct longlong3 { long long int x, y, z; }; struct __align__(16) longlong4 { long long int x, y, z, w; };
struct ulonglong1 { unsigned long long int x; }; struct __align__(16) ulonglong2 { unsigned long long int x, y; };
struct ulonglong3 { unsigned long long int x, y, z; }; struct __align__(16) ulonglong4 { unsigned long long int x, y, z, w; };
struct float1 { float x; }; struct __align__(8) float2 { float x, y; };
struct float3 { float x, y, z; }; struct __align__(16) float4 { float x, y, z, w; };
struct double1 { double x; }; struct __align__(16) double2 { double x, y; };
struct double3 { double x, y, z; }; struct __align__(16) double4 { double x, y, z, w; };

/* ---- CUDA 13 explicitly aligned 4 x 64-bit types ------------------------------------------- */
struct __align__(16) long4_16a { long int x, y, z, w; }; struct __align__(32) long4_32a { long int x, y, z, w; };
struct __align__(16) ulong4_16a { unsigned long int x, y, z, w; }; struct __align__(32) ulong4_32a { unsigned long int x, y, z, w; };
struct __align__(16) longlong4_16a { long long int x, y, z, w; }; struct __align__(32) longlong4_32a { long long int x, y, z, w; };
struct __align__(16) ulonglong4_16a { unsigned long long int x, y, z, w; }; struct __align__(32) ulonglong4_32a { unsigned long long int x, y, z, w; };
struct __align__(16) double4_16a { double x, y, z, w; }; struct __align__(32) double4_32a { double x, y, z, w; };

/* ---- dim3: launch extents; converts to and from uint3 ---------------------------------------- */
struct dim3 {
  unsigned int x, y, z;
  __host__ __device__ constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
      : x(vx), y(vy), z(vz) {}
  __host__ __device__ constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  __host__ __device__ constexpr operator uint3() const { return uint3{x, y, z}; }
};

#endif
