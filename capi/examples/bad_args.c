/* Every C entry point under bad arguments: NULL pointers, short buffers, text that is not
 * UTF-8, an unknown variant, a missing directory, a directory without tables, corrupt files,
 * illegal positions, unknown flags. Each must return the expected status with a message
 * (never crash); one line per case: "case STATUS message".
 *
 * Usage: bad_args GOOD_DIR EMPTY_DIR CORRUPT_DIR   Exit status: the number of cases that
 * did not hold. Built and run by capi/tests/c_programs.rs. */
#include <stdio.h>
#include <string.h>

#include "dtb.h"

static int failed;

static void check(const char *name, int expected, int got) {
    const char *msg = dtb_last_error();
    int ok = got == expected && msg != NULL && (expected == DTB_OK || expected == DTB_NOT_CACHED || msg[0] != '\0');
    printf("%s %s %s%s\n", name, dtb_status_name(got), got == DTB_OK ? "" : msg, ok ? "" : "  <-- WRONG");
    if (!ok) {
        fprintf(stderr, "%s: expected %s, got %s (%s)\n", name, dtb_status_name(expected), dtb_status_name(got), msg);
        failed++;
    }
}

#define CHECK(name, expected, call) check(name, expected, (call))

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s GOOD_DIR EMPTY_DIR CORRUPT_DIR\n", argv[0]);
        return 100;
    }
    const char *good = argv[1], *empty = argv[2], *corrupt = argv[3];
    dtb_tablebase *tb = (dtb_tablebase *)1;
    dtb_value v;
    dtb_position pos;
    char buf[DTB_MOVE_TEXT];
    dtb_move moves[4];
    size_t count = 99;
    dtb_stats stats;
    dtb_dtc dv;
    dtb_dtc_move dmoves[4];

    /* Opening. */
    CHECK("open_null_dir", DTB_ERR_NULL, dtb_open(NULL, "english", 0, &tb));
    if (tb != NULL) { fprintf(stderr, "open_null_dir: *out not set to NULL\n"); failed++; }
    CHECK("open_null_variant", DTB_ERR_NULL, dtb_open(good, NULL, 0, &tb));
    CHECK("open_null_out", DTB_ERR_NULL, dtb_open(good, "english", 0, NULL));
    CHECK("open_unknown_variant", DTB_ERR_VARIANT, dtb_open(good, "chess", 0, &tb));
    CHECK("open_variant_not_utf8", DTB_ERR_UTF8, dtb_open(good, "engl\xff\xfeish", 0, &tb));
    CHECK("open_missing_dir", DTB_ERR_DIRECTORY, dtb_open("/nonexistent/dtb-tables", "english", 0, &tb));
    CHECK("open_dir_not_utf8_missing", DTB_ERR_DIRECTORY, dtb_open("/nonexistent/t\xff\xfe", "english", 0, &tb));
    CHECK("open_dir_is_a_file", DTB_ERR_DIRECTORY, dtb_open("/etc/passwd", "english", 0, &tb));
    CHECK("open_dir_without_tables", DTB_ERR_DIRECTORY, dtb_open(empty, "english", 0, &tb));
    CHECK("open_other_variant", DTB_ERR_DIRECTORY, dtb_open(good, "international", 0, &tb));
    CHECK("open_count_zero", DTB_ERR_VARIANT, dtb_open(good, "english,count=0", 0, &tb));
    CHECK("open_count_unknown_regime", DTB_ERR_VARIANT, dtb_open(good, "english,count=five:10", 0, &tb));
    dtb_close(NULL);

    CHECK("open_good", DTB_OK, dtb_open(good, "english", 1u << 20, &tb));
    if (tb == NULL) return 100;

    /* FEN probes. */
    CHECK("probe_null_tb", DTB_ERR_NULL, dtb_probe_fen(NULL, "W:WK32:BK26", &v));
    CHECK("probe_null_fen", DTB_ERR_NULL, dtb_probe_fen(tb, NULL, &v));
    CHECK("probe_null_out", DTB_ERR_NULL, dtb_probe_fen(tb, "W:WK32:BK26", NULL));
    CHECK("probe_garbage_fen", DTB_ERR_FEN, dtb_probe_fen(tb, "hello", &v));
    CHECK("probe_empty_fen", DTB_ERR_FEN, dtb_probe_fen(tb, "", &v));
    CHECK("probe_fen_not_utf8", DTB_ERR_UTF8, dtb_probe_fen(tb, "W:WK32:BK\xff", &v));
    CHECK("probe_square_off_board", DTB_ERR_FEN, dtb_probe_fen(tb, "W:WK33:BK26", &v));
    CHECK("probe_man_on_crowning_row", DTB_ERR_POSITION, dtb_probe_fen(tb, "W:W1:BK26", &v));
    CHECK("probe_too_many_pieces", DTB_ERR_POSITION,
          dtb_probe_fen(tb, "W:W5-17:BK30", &v));
    CHECK("probe_game_over", DTB_ERR_GAME_OVER, dtb_probe_fen(tb, "W:W:B", &v));
    CHECK("probe_missing_table", DTB_ERR_MISSING_TABLE, dtb_probe_fen(tb, "W:WK1,K2,K3:BK30,K31", &v));
    CHECK("probe_unknown_flags", DTB_ERR_ARGUMENT, dtb_probe_fen_flags(tb, "W:WK32:BK26", 0x100, &v));
    CHECK("probe_quiet_on_capture", DTB_ERR_CAPTURE_POSITION,
          dtb_probe_fen_flags(tb, "W:W22:B18", DTB_PROBE_QUIET, &v));
    CHECK("probe_ok", DTB_OK, dtb_probe_fen(tb, "W:WK32:BK26", &v));
    if (v.wld != DTB_WIN || v.dtw != 9) { fprintf(stderr, "probe_ok: %d %d\n", v.wld, v.dtw); failed++; }

    /* Bitboard probes. */
    CHECK("bitboard_null_pos", DTB_ERR_NULL, dtb_probe(tb, NULL, 0, &v));
    pos = (dtb_position){.white = 1ull << 31, .black = 1ull << 25, .kings = (1ull << 31) | (1ull << 25), .side_to_move = 7};
    CHECK("bitboard_bad_side", DTB_ERR_POSITION, dtb_probe(tb, &pos, 0, &v));
    pos.side_to_move = DTB_WHITE;
    pos.black |= 1ull << 40;
    CHECK("bitboard_off_board", DTB_ERR_POSITION, dtb_probe(tb, &pos, 0, &v));
    pos.black = 1ull << 31;
    CHECK("bitboard_square_twice", DTB_ERR_POSITION, dtb_probe(tb, &pos, 0, &v));
    pos.black = 1ull << 25;
    pos.kings = 1ull << 5;
    CHECK("bitboard_king_without_piece", DTB_ERR_POSITION, dtb_probe(tb, &pos, 0, &v));
    pos.kings = (1ull << 31) | (1ull << 25);
    CHECK("bitboard_ok", DTB_OK, dtb_probe(tb, &pos, 0, &v));
    if (v.wld != DTB_WIN || v.dtw != 9) { fprintf(stderr, "bitboard_ok: %d %d\n", v.wld, v.dtw); failed++; }
    CHECK("kingsrow_bad_color", DTB_ERR_POSITION, dtb_probe_kingsrow(tb, 1u << 25, 1u << 31, 0, 9, 0, &v));
    CHECK("kingsrow_null_out", DTB_ERR_NULL, dtb_probe_kingsrow(tb, 1u << 25, 1u << 31, 0, 1, 0, NULL));

    /* Best move and ranked moves: buffers. */
    CHECK("best_null_buf", DTB_ERR_NULL, dtb_best_move_fen(tb, "W:WK32:BK26", NULL, 64));
    CHECK("best_zero_len", DTB_ERR_BUFFER, dtb_best_move_fen(tb, "W:WK32:BK26", buf, 0));
    CHECK("best_short_len", DTB_ERR_BUFFER, dtb_best_move_fen(tb, "W:WK32:BK26", buf, 5));
    CHECK("best_ok", DTB_OK, dtb_best_move_fen(tb, "W:WK32:BK26", buf, 6));
    if (strcmp(buf, "32-27") != 0) { fprintf(stderr, "best_ok: %s\n", buf); failed++; }
    CHECK("best_bad_fen", DTB_ERR_FEN, dtb_best_move_fen(tb, "W:", buf, sizeof buf));
    CHECK("best_bitboard_null_pos", DTB_ERR_NULL, dtb_best_move(tb, NULL, buf, sizeof buf));
    CHECK("moves_null_count", DTB_ERR_NULL, dtb_moves_fen(tb, "W:WK32:BK26", moves, 4, NULL));
    CHECK("moves_zero_cap", DTB_ERR_BUFFER, dtb_moves_fen(tb, "W:WK32:BK26", NULL, 0, &count));
    if (count != 2) { fprintf(stderr, "moves_zero_cap: count %zu, expected 2\n", count); failed++; }
    CHECK("moves_short_cap", DTB_ERR_BUFFER, dtb_moves_fen(tb, "W:WK32:BK26", moves, 1, &count));
    CHECK("moves_null_array", DTB_ERR_NULL, dtb_moves_fen(tb, "W:WK32:BK26", NULL, 4, &count));
    CHECK("moves_ok", DTB_OK, dtb_moves_fen(tb, "W:WK32:BK26", moves, 4, &count));
    CHECK("moves_bitboard_null_pos", DTB_ERR_NULL, dtb_moves(tb, NULL, moves, 4, &count));
    CHECK("from_fen_null_out", DTB_ERR_NULL, dtb_position_from_fen(tb, "W:WK32:BK26", NULL));
    CHECK("from_fen_bad", DTB_ERR_FEN, dtb_position_from_fen(tb, "X:WK32:BK26", &pos));

    /* Values under the count rule: the good directory has no DTC tables. */
    CHECK("dtc_null_tb", DTB_ERR_NULL, dtb_probe_dtc_fen(NULL, "W:WK32:BK26", 0, &dv));
    CHECK("dtc_null_fen", DTB_ERR_NULL, dtb_probe_dtc_fen(tb, NULL, 0, &dv));
    CHECK("dtc_null_out", DTB_ERR_NULL, dtb_probe_dtc_fen(tb, "W:WK32:BK26", 0, NULL));
    CHECK("dtc_fen_not_utf8", DTB_ERR_UTF8, dtb_probe_dtc_fen(tb, "W:WK32:BK\xff", 0, &dv));
    CHECK("dtc_bad_fen", DTB_ERR_FEN, dtb_probe_dtc_fen(tb, "hello", 0, &dv));
    CHECK("dtc_negative_counter", DTB_ERR_COUNTER, dtb_probe_dtc_fen(tb, "W:WK32:BK26", -1, &dv));
    CHECK("dtc_missing_table", DTB_ERR_MISSING_TABLE, dtb_probe_dtc_fen(tb, "W:WK32:BK26", 0, &dv));
    CHECK("dtc_bitboard_null_pos", DTB_ERR_NULL, dtb_probe_dtc(tb, NULL, 0, &dv));
    CHECK("dtc_moves_null_count", DTB_ERR_NULL, dtb_moves_dtc_fen(tb, "W:WK32:BK26", 0, dmoves, 4, NULL));
    CHECK("dtc_moves_null_fen", DTB_ERR_NULL, dtb_moves_dtc_fen(tb, NULL, 0, dmoves, 4, &count));
    CHECK("dtc_moves_missing_table", DTB_ERR_MISSING_TABLE, dtb_moves_dtc_fen(tb, "W:WK32:BK26", 0, dmoves, 4, &count));

    /* The rest. */
    CHECK("verify_null", DTB_ERR_NULL, dtb_verify(NULL));
    CHECK("verify_good", DTB_OK, dtb_verify(tb));
    CHECK("stats_null_out", DTB_ERR_NULL, dtb_cache_stats(tb, NULL));
    CHECK("stats_null_tb", DTB_ERR_NULL, dtb_cache_stats(NULL, &stats));
    if (dtb_max_pieces(NULL) != 0 || dtb_max_pieces(tb) != 4) { fprintf(stderr, "max_pieces\n"); failed++; }
    if (strcmp(dtb_status_name(12345), "unknown status") != 0) { fprintf(stderr, "status_name\n"); failed++; }
    dtb_close(tb);

    /* Corrupt files: a truncated WLD table, a DTW table with a changed payload byte. */
    CHECK("open_corrupt", DTB_OK, dtb_open(corrupt, "english", 1u << 20, &tb));
    CHECK("corrupt_truncated_wld", DTB_ERR_TABLE,
          dtb_probe_fen_flags(tb, "W:WK32:BK26", DTB_PROBE_WLD_ONLY, &v));
    CHECK("corrupt_truncated_wld_again", DTB_ERR_TABLE,
          dtb_probe_fen_flags(tb, "B:WK32:BK26", DTB_PROBE_WLD_ONLY, &v));
    CHECK("corrupt_verify", DTB_ERR_TABLE, dtb_verify(tb));
    dtb_close(tb);

    printf("%d failed\n", failed);
    return failed;
}
