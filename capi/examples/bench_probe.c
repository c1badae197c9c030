/* Cost of one probe from C: dtb_probe (bitboards, full value and distance) over the positions
 * in FILE (lines "white black kings side", decimal), once with a 64 MiB cache after a warm-up
 * round (cached) and once with a 0-byte cache (every look-up reads and decompresses its
 * block). Prints "cached NS" and "uncached NS" (nanoseconds per probe, the least of REPS
 * timings) and "checksum N". Usage: bench_probe DIR FILE ROUNDS REPS.
 * Run by capi/tests/c_bench.rs beside the same loop in Rust. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dtb.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static long long run(const dtb_tablebase *tb, const dtb_position *pos, size_t n, int rounds) {
    long long sum = 0;
    for (int r = 0; r < rounds; r++)
        for (size_t i = 0; i < n; i++) {
            dtb_value v;
            if (dtb_probe(tb, &pos[i], 0, &v) != DTB_OK) {
                fprintf(stderr, "probe %zu: %s\n", i, dtb_last_error());
                exit(1);
            }
            sum += v.wld * 1000 + v.dtw;
        }
    return sum;
}

static double best_of(const dtb_tablebase *tb, const dtb_position *pos, size_t n, int rounds, int reps,
                      long long *sum) {
    double best = 1e300;
    for (int k = 0; k < reps; k++) {
        double t = now();
        *sum = run(tb, pos, n, rounds);
        double ns = (now() - t) / ((double)n * rounds);
        if (ns < best) best = ns;
    }
    return best;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s DIR FILE ROUNDS REPS\n", argv[0]);
        return 2;
    }
    int rounds = atoi(argv[3]), reps = atoi(argv[4]);
    FILE *f = fopen(argv[2], "r");
    if (!f) { perror(argv[2]); return 2; }
    size_t cap = 1 << 16, n = 0;
    dtb_position *pos = malloc(cap * sizeof *pos);
    unsigned long long w, b, k;
    int side;
    while (fscanf(f, "%llu %llu %llu %d", &w, &b, &k, &side) == 4) {
        if (n == cap) pos = realloc(pos, (cap *= 2) * sizeof *pos);
        pos[n++] = (dtb_position){.white = w, .black = b, .kings = k, .side_to_move = side};
    }
    fclose(f);
    dtb_tablebase *cached, *uncached;
    if (dtb_open(argv[1], "english", 64u << 20, &cached) != DTB_OK ||
        dtb_open(argv[1], "english", 0, &uncached) != DTB_OK) {
        fprintf(stderr, "%s\n", dtb_last_error());
        return 2;
    }
    long long sum_c, sum_u;
    run(cached, pos, n, 1);
    double c = best_of(cached, pos, n, rounds, reps, &sum_c);
    double u = best_of(uncached, pos, n, 1, reps, &sum_u);
    if (sum_c != sum_u * rounds) {
        fprintf(stderr, "checksums differ: %lld %lld\n", sum_c, sum_u);
        return 1;
    }
    printf("positions %zu\ncached %.1f\nuncached %.1f\nchecksum %lld\n", n, c, u, sum_u);
    dtb_close(cached);
    dtb_close(uncached);
    free(pos);
    return 0;
}
