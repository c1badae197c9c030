/* Open a table directory and probe every FEN given from 8 threads at once, through the FEN
 * and the bitboard entry points, each thread checking that they agree and that all threads
 * see the same answers; then print one line per FEN:
 *
 *   FEN wld dtw best nmoves move:wld:dtw...      (or: FEN error STATUS message)
 *
 * Usage: probe_threads DIR VARIANT FEN...   Exit status 0 if every check held.
 * Built and run by capi/tests/c_programs.rs, which compares the lines with the Rust API. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtb.h"

#define THREADS 8
#define ROUNDS 50
#define MAX_MOVES 64

struct answer {
    int status;
    dtb_value value;
    char best[DTB_MOVE_TEXT];
    size_t nmoves;
    dtb_move moves[MAX_MOVES];
    char error[512];
};

static dtb_tablebase *tb;
static int nfens;
static char **fens;
static struct answer *answers[THREADS];
static int failures[THREADS];

static int same(const struct answer *a, const struct answer *b) {
    if (a->status != b->status) return 0;
    if (a->status != DTB_OK) return 1;
    if (a->value.wld != b->value.wld || a->value.dtw != b->value.dtw) return 0;
    if (strcmp(a->best, b->best) != 0 || a->nmoves != b->nmoves) return 0;
    for (size_t i = 0; i < a->nmoves; i++) {
        if (strcmp(a->moves[i].pdn, b->moves[i].pdn) != 0) return 0;
        if (a->moves[i].value.wld != b->moves[i].value.wld) return 0;
        if (a->moves[i].value.dtw != b->moves[i].value.dtw) return 0;
    }
    return 1;
}

static void probe_one(const char *fen, struct answer *a, int *fail) {
    memset(a, 0, sizeof *a);
    a->status = dtb_probe_fen(tb, fen, &a->value);
    if (a->status != DTB_OK) {
        snprintf(a->error, sizeof a->error, "%s", dtb_last_error());
        if (a->error[0] == '\0') { fprintf(stderr, "no message for %s\n", fen); (*fail)++; }
        return;
    }
    /* The same position as bitboards gives the same value. */
    dtb_position pos;
    dtb_value v2;
    if (dtb_position_from_fen(tb, fen, &pos) != DTB_OK || dtb_probe(tb, &pos, 0, &v2) != DTB_OK ||
        v2.wld != a->value.wld || v2.dtw != a->value.dtw) {
        fprintf(stderr, "bitboard probe differs for %s: %s\n", fen, dtb_last_error());
        (*fail)++;
    }
    /* Now in the cache: a cache-only probe answers, the same. */
    dtb_value v3;
    if (dtb_probe_fen_flags(tb, fen, DTB_PROBE_CACHE_ONLY, &v3) != DTB_OK || v3.wld != a->value.wld ||
        v3.dtw != a->value.dtw) {
        fprintf(stderr, "cache-only probe differs for %s\n", fen);
        (*fail)++;
    }
    /* WLD alone agrees. */
    dtb_value v4;
    if (dtb_probe(tb, &pos, DTB_PROBE_WLD_ONLY, &v4) != DTB_OK || v4.wld != a->value.wld || v4.dtw != -1) {
        fprintf(stderr, "WLD-only probe differs for %s\n", fen);
        (*fail)++;
    }
    if (dtb_best_move_fen(tb, fen, a->best, sizeof a->best) != DTB_OK) {
        fprintf(stderr, "best move of %s: %s\n", fen, dtb_last_error());
        (*fail)++;
    }
    if (dtb_moves_fen(tb, fen, a->moves, MAX_MOVES, &a->nmoves) != DTB_OK) {
        fprintf(stderr, "moves of %s: %s\n", fen, dtb_last_error());
        (*fail)++;
    }
    /* The head of the ranked list is the best move and carries the position's value. */
    if (a->nmoves > 0 && (strcmp(a->moves[0].pdn, a->best) != 0 || a->moves[0].value.wld != a->value.wld ||
                          a->moves[0].value.dtw != a->value.dtw)) {
        fprintf(stderr, "ranked head differs from best move for %s\n", fen);
        (*fail)++;
    }
}

static void *worker(void *arg) {
    int t = (int)(size_t)arg;
    struct answer *mine = calloc((size_t)nfens, sizeof *mine);
    struct answer *scratch = malloc(sizeof *scratch);
    answers[t] = mine;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < nfens; i++) {
            /* Threads walk the list from different starts. */
            int k = (i + t * 3) % nfens;
            if (r == 0) {
                probe_one(fens[k], &mine[k], &failures[t]);
            } else {
                probe_one(fens[k], scratch, &failures[t]);
                if (!same(scratch, &mine[k])) {
                    fprintf(stderr, "thread %d round %d: answer for %s changed\n", t, r, fens[k]);
                    failures[t]++;
                }
            }
        }
    }
    free(scratch);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s DIR VARIANT FEN...\n", argv[0]);
        return 2;
    }
    if (dtb_open(argv[1], argv[2], 8u << 20, &tb) != DTB_OK) {
        fprintf(stderr, "%s\n", dtb_last_error());
        return 2;
    }
    fens = argv + 3;
    nfens = argc - 3;
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++) pthread_create(&threads[t], NULL, worker, (void *)(size_t)t);
    for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
    int failed = 0;
    for (int t = 0; t < THREADS; t++) {
        failed += failures[t];
        for (int i = 0; i < nfens; i++)
            if (!same(&answers[t][i], &answers[0][i])) {
                fprintf(stderr, "threads 0 and %d disagree on %s\n", t, fens[i]);
                failed++;
            }
    }
    for (int i = 0; i < nfens; i++) {
        const struct answer *a = &answers[0][i];
        if (a->status != DTB_OK) {
            printf("%s error %s %s\n", fens[i], dtb_status_name(a->status), a->error);
            continue;
        }
        printf("%s %d %d %s %zu", fens[i], a->value.wld, a->value.dtw, a->best[0] ? a->best : "-", a->nmoves);
        for (size_t m = 0; m < a->nmoves; m++)
            printf(" %s:%d:%d", a->moves[m].pdn, a->moves[m].value.wld, a->moves[m].value.dtw);
        printf("\n");
    }
    dtb_stats s;
    if (dtb_cache_stats(tb, &s) != DTB_OK || s.hits == 0 || s.misses == 0 ||
        s.bytes + s.thread_bytes > s.capacity_bytes || s.thread_bytes > s.capacity_bytes / 4) {
        fprintf(stderr, "cache statistics: hits %llu misses %llu bytes %llu thread_bytes %llu capacity %llu\n",
                (unsigned long long)s.hits, (unsigned long long)s.misses, (unsigned long long)s.bytes,
                (unsigned long long)s.thread_bytes, (unsigned long long)s.capacity_bytes);
        failed++;
    }
    if (dtb_verify(tb) != DTB_OK) {
        fprintf(stderr, "verify: %s\n", dtb_last_error());
        failed++;
    }
    for (int t = 0; t < THREADS; t++) free(answers[t]);
    dtb_close(tb);
    return failed ? 1 : 0;
}
