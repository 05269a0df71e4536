/* arpa/inet.h -- cuda2tile parse stub (byte order and address conversion). */
#ifndef __CUDA2TILE_ARPA_INET_H
#define __CUDA2TILE_ARPA_INET_H
#pragma clang system_header
#include <stdint.h>
typedef uint32_t in_addr_t;
struct in_addr { in_addr_t s_addr; };
extern "C" {
uint32_t htonl(uint32_t hostlong);
uint16_t htons(uint16_t hostshort);
uint32_t ntohl(uint32_t netlong);
uint16_t ntohs(uint16_t netshort);
in_addr_t inet_addr(const char *cp);
int inet_pton(int af, const char *src, void *dst);
const char *inet_ntop(int af, const void *src, char *dst, unsigned int size);
}
#endif
