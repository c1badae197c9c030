/* Values under a count rule from C: open tables with a count profile (`count=` in the variant
 * text), probe a FEN at a counter, and list its moves ranked under the rule. README's C
 * example of a cursed win; built and run by capi/tests/c_programs.rs.
 *
 * Usage: probe_dtc DIR VARIANT FEN COUNTER
 *   probe_dtc tables english,count=20 W:WK1,K19:BK27 0
 * prints
 *   cursed-win: dtc 21, limit 20; at counter 0: draw
 *   1-6 zeroing 0 after: loss dtc 20 counter 1: draw
 *   ...
 * or "error STATUS message" (exit status 1). */
#include <stdio.h>
#include <stdlib.h>

#include "dtb.h"

static const char *category_name(int c) {
    switch (c) {
    case DTB_CATEGORY_WIN: return "win";
    case DTB_CATEGORY_CURSED_WIN: return "cursed-win";
    case DTB_CATEGORY_DRAW: return "draw";
    case DTB_CATEGORY_BLESSED_LOSS: return "blessed-loss";
    case DTB_CATEGORY_LOSS: return "loss";
    default: return "?";
    }
}

static const char *result_name(int r) { return r > 0 ? "win" : r < 0 ? "loss" : "draw"; }

static int failure(int status, dtb_tablebase *tb) {
    printf("error %s %s\n", dtb_status_name(status), dtb_last_error());
    dtb_close(tb);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s DIR VARIANT FEN COUNTER\n", argv[0]);
        return 2;
    }
    int counter = atoi(argv[4]);
    dtb_tablebase *tb = NULL;
    int s = dtb_open(argv[1], argv[2], 16u << 20, &tb); /* "english,count=20": the profile */
    if (s != DTB_OK) return failure(s, NULL);
    dtb_dtc v; /* category at counter 0, result at the counter, plies to conversion */
    s = dtb_probe_dtc_fen(tb, argv[3], counter, &v);
    if (s != DTB_OK) return failure(s, tb);
    printf("%s: dtc %d, limit %d; at counter %d: %s\n", category_name(v.category), v.plies, v.limit,
           v.counter, result_name(v.result));
    dtb_dtc_move moves[64];
    size_t n = 0;
    s = dtb_moves_dtc_fen(tb, argv[3], counter, moves, 64, &n);
    if (s != DTB_OK) return failure(s, tb);
    for (size_t i = 0; i < n; i++) {
        const dtb_dtc *a = &moves[i].after; /* for the opponent, at its counter */
        printf("%s zeroing %d after: %s dtc %d counter %d: %s\n", moves[i].pdn, moves[i].zeroing,
               category_name(a->category), a->plies, a->counter, result_name(a->result));
    }
    dtb_close(tb);
    return 0;
}
