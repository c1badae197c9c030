// The C++ view of the C ABI: open a table directory, probe every FEN given from 8
// std::threads, check all threads agree, print "FEN wld dtw best" per FEN (or
// "FEN error STATUS"). Usage: probe_threads_cpp DIR VARIANT FEN...
// Built and run by capi/tests/c_programs.rs, which compares the lines with the Rust API.
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "dtb.h"

namespace {

// RAII owner of a dtb_tablebase; errors become exceptions carrying dtb's message.
class Tablebase {
  public:
    Tablebase(const std::string &dir, const std::string &variant, std::size_t cache_bytes) {
        if (dtb_open(dir.c_str(), variant.c_str(), cache_bytes, &tb_) != DTB_OK)
            throw std::runtime_error(dtb_last_error());
    }
    ~Tablebase() { dtb_close(tb_); }
    Tablebase(const Tablebase &) = delete;
    Tablebase &operator=(const Tablebase &) = delete;

    struct Answer {
        int status = DTB_OK;
        dtb_value value{};
        std::string best;
        bool operator==(const Answer &o) const {
            return status == o.status && value.wld == o.value.wld && value.dtw == o.value.dtw && best == o.best;
        }
    };

    Answer probe(const std::string &fen) const {
        Answer a;
        a.status = dtb_probe_fen(tb_, fen.c_str(), &a.value);
        if (a.status != DTB_OK) return a;
        char buf[DTB_MOVE_TEXT];
        a.status = dtb_best_move_fen(tb_, fen.c_str(), buf, sizeof buf);
        if (a.status == DTB_OK) a.best = buf;
        return a;
    }

  private:
    dtb_tablebase *tb_ = nullptr;
};

}  // namespace

int main(int argc, char **argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s DIR VARIANT FEN...\n", argv[0]);
        return 2;
    }
    try {
        const Tablebase tb(argv[1], argv[2], 8u << 20);
        const std::vector<std::string> fens(argv + 3, argv + argc);
        const int threads = 8;
        std::vector<std::vector<Tablebase::Answer>> answers(threads);
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; t++)
            pool.emplace_back([&, t] {
                for (int round = 0; round < 50; round++)
                    for (std::size_t i = 0; i < fens.size(); i++) {
                        auto a = tb.probe(fens[(i + t) % fens.size()]);
                        if (round == 0) answers[t].push_back(a);
                    }
            });
        for (auto &th : pool) th.join();
        int failed = 0;
        for (int t = 0; t < threads; t++)
            for (std::size_t i = 0; i < fens.size(); i++)
                // Thread t's i-th answer is of FEN (i + t) mod n; thread 0's j-th of FEN j.
                if (!(answers[t][i] == answers[0][(i + t) % fens.size()])) {
                    std::fprintf(stderr, "thread %d disagrees on %s\n", t, fens[(i + t) % fens.size()].c_str());
                    failed++;
                }
        for (std::size_t i = 0; i < fens.size(); i++) {
            const auto &a = answers[0][i];
            if (a.status != DTB_OK)
                std::printf("%s error %s\n", fens[i].c_str(), dtb_status_name(a.status));
            else
                std::printf("%s %d %d %s\n", fens[i].c_str(), a.value.wld, a.value.dtw,
                            a.best.empty() ? "-" : a.best.c_str());
        }
        return failed ? 1 : 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    }
}
