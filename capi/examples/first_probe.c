/* The README's first C program: open a directory of tables, probe a FEN, print its value and
 * best move. Built by capi/tests/install.rs against an installed libdtb (pkg-config).
 *
 * Usage: first_probe DIR VARIANT FEN   prints "win in 9 plies, best 32-27" */
#include <stdio.h>

#include <dtb.h>

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s DIR VARIANT FEN\n", argv[0]);
        return 2;
    }
    dtb_tablebase *tb;
    if (dtb_open(argv[1], argv[2], 64u << 20, &tb) != DTB_OK) { /* dir, variant, cache bytes */
        fprintf(stderr, "%s\n", dtb_last_error());
        return 1;
    }
    dtb_value v; /* v.wld: 1 win, 0 draw, -1 loss; v.dtw: plies, or -1 for a draw */
    char best[DTB_MOVE_TEXT];
    if (dtb_probe_fen(tb, argv[3], &v) != DTB_OK || dtb_best_move_fen(tb, argv[3], best, sizeof best) != DTB_OK) {
        fprintf(stderr, "%s\n", dtb_last_error());
        dtb_close(tb);
        return 1;
    }
    const char *wld = v.wld > 0 ? "win" : v.wld < 0 ? "loss" : "draw";
    if (v.dtw >= 0)
        printf("%s in %d plies, best %s\n", wld, v.dtw, best[0] ? best : "none");
    else
        printf("%s, best %s\n", wld, best[0] ? best : "none");
    dtb_close(tb);
    return 0;
}
