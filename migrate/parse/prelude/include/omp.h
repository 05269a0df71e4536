/* omp.h -- OpenMP runtime calls host code uses for reference loops (cuda2tile parse stub).  The
 * `#pragma omp` directives themselves are ignored without -fopenmp. */
#ifndef __CUDA2TILE_OMP_H
#define __CUDA2TILE_OMP_H
#pragma clang system_header
extern "C" {
int omp_get_thread_num(void);
int omp_get_num_threads(void);
int omp_get_max_threads(void);
int omp_get_num_procs(void);
void omp_set_num_threads(int num_threads);
int omp_in_parallel(void);
double omp_get_wtime(void);
double omp_get_wtick(void);
}
#endif
