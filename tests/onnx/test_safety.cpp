// What a command may touch (docs/cli.md, "Safety"), tried as a careless or hostile
// user would: every output option of every command pointed at '.', '..', '/',
// an input, an input's folder, a folder of the user's files, a FIFO, a
// device, links to inputs -- each refused with exit 2 and one line, and the
// whole tree (names, types, modes, contents) exactly as it was. Then kills:
// SIGKILL at spread-out instants of a write leaves the old output or the new
// one, whole, and nothing but a named temporary; SIGINT leaves not even that.
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "onnx_support.hpp"

namespace fs = std::filesystem;
using onnx_test::q;
using onnx_test::read_file;
using onnx_test::run_result;
using onnx_test::temp_dir;
using onnx_test::write_file;

namespace {

// Everything below `root`, one entry per path: its type, mode and (for a
// file) its bytes, or (for a link) its target. Two equal snapshots are the
// same tree as far as a user can tell.
std::map<std::string, std::string> snapshot(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const auto& p = it->path();
    struct stat st {};
    REQUIRE(::lstat(p.c_str(), &st) == 0);
    std::string what = std::to_string(st.st_mode) + ":";
    if (S_ISREG(st.st_mode)) {
      what += read_file(p);
    } else if (S_ISLNK(st.st_mode)) {
      what += fs::read_symlink(p).string();
    }
    out[fs::relative(p, root).string()] = what;
  }
  return out;
}

// The names in `dir` that are not in `before`.
std::vector<std::string> new_names(const fs::path& dir, const std::vector<std::string>& before) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const auto name = e.path().filename().string();
    if (std::find(before.begin(), before.end(), name) == before.end()) {
      out.push_back(name);
    }
  }
  return out;
}

bool is_temporary_of(const std::string& name, const std::string& target) {
  const std::string prefix = "." + target + ".shardpoint-";
  return name.size() == prefix.size() + 6 && name.compare(0, prefix.size(), prefix) == 0;
}

// Runs shardpoint in `cwd` (a shell command line: `args` quoted where
// needed); stdout and stderr go to `scratch`, outside the tree watched.
run_result run_in(const fs::path& cwd, const std::string& args, const fs::path& scratch,
                  const std::string& prefix = "") {
  const fs::path out = scratch / "stdout";
  const fs::path err = scratch / "stderr";
  const std::string cmd = "cd " + q(cwd) + " && " + prefix + "'" + SHARDPOINT_CLI + "' " + args +
                          " >" + q(out) + " 2>" + q(err) + " </dev/null";
  const int status = std::system(cmd.c_str());
  run_result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

// A user's working folder `root/work` holding a model, its config, a
// strategy and rank folders, a folder of the user's own files, a FIFO, a
// symbolic and a hard link to the model; `root` holds a file of its own.
struct workspace {
  temp_dir root;
  temp_dir scratch;
  fs::path work = root / "work";

  workspace() {
    fs::create_directories(work / "user" / "sub");
    write_file(root / "precious.txt", "the parent's own file\n");
    write_file(work / "user" / "notes.txt", "my notes\n");
    write_file(work / "user" / "sub" / "data.bin", std::string("\0\1\2\3", 4));
    REQUIRE(::mkfifo((work / "fifo").c_str(), 0644) == 0);
    must("synth decoder --layers 2 --hidden 16 --sequence 4 model.onnx");
    must("suggest --input-model model.onnx --stages 2 --output-config c.yaml");
    must("weights strategy --input-model model.onnx --manual-sharding-config c.yaml "
         "--tensor-parallel 2 --replicate-shared --output-dir st");
    must("weights split --input-model model.onnx --strategy-dir st --output-dir rk");
    fs::create_symlink("user/notes.txt", work / "notes-link");
    fs::create_symlink("model.onnx", work / "model-link.onnx");
    // A link to a folder: "view/../.." is the kernel's work/, by the link's
    // target, where its text says root/.
    fs::create_symlink("user/sub", work / "view");
    fs::create_hard_link(work / "model.onnx", work / "model-hard.onnx");
  }
  void must(const std::string& args) {
    const auto r = run_in(work, args, scratch.path());
    INFO(args, "\n", r.err);
    REQUIRE(r.code == 0);
  }
};

void expect_refused(workspace& w, const std::string& args) {
  const auto before = snapshot(w.root.path());
  const auto r = run_in(w.work, args, w.scratch.path());
  CAPTURE(args);
  CAPTURE(r.err);
  CHECK(r.code == 2);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.rfind("shardpoint: error: ", 0) == 0);
  CHECK(snapshot(w.root.path()) == before);
}

std::string with(std::string command, const std::string& target) {
  const auto at = command.find("{}");
  REQUIRE(at != std::string::npos);
  return command.replace(at, 2, q(target));
}

} // namespace

TEST_CASE("file outputs: '.', '..', '/', inputs, links to them, folders, FIFOs, devices") {
  workspace w;
  // Each command, and the targets it may replace because it does not read
  // them (as --output-model is asked to).
  const std::vector<std::pair<std::string, std::vector<std::string>>> commands{
      {"shard --input-model model.onnx --manual-sharding-config c.yaml --output-model {}", {}},
      // (without a report the nodes are read as views: another writer)
      {"shard --input-model model.onnx --manual-sharding-config c.yaml --report none "
       "--output-model {}",
       {}},
      {"strip --input-model model.onnx --output-model {}", {"c.yaml"}},
      {"suggest --input-model model.onnx --stages 2 --output-config {}", {"c.yaml"}},
      {"suggest --input-model model.onnx --stages 2 --output-config fresh.yaml --output-model {}",
       {"c.yaml"}},
      {"synth decoder --layers 1 --hidden 8 --sequence 4 {}",
       {"c.yaml", "model.onnx", "./model.onnx", "user/../model.onnx", "view/../../model.onnx",
        "model-hard.onnx"}},
      {"simulate --input-model model.onnx --manual-sharding-config c.yaml --batches-per-step 4 "
       "--trace {}",
       {}},
      {"weights merge --strategy-dir st --ranks-dir rk --force --output {}",
       {"c.yaml", "model.onnx", "./model.onnx", "user/../model.onnx", "view/../../model.onnx",
        "model-hard.onnx"}},
  };
  const std::vector<std::string> targets{".",
                                         "..",
                                         "/",
                                         "user",
                                         "user/",
                                         "./user/../user",
                                         "fifo",
                                         "/dev/null",
                                         "model.onnx",
                                         "./model.onnx",
                                         "user/../model.onnx",
                                         "view/../../model.onnx",
                                         "c.yaml",
                                         "model-link.onnx",
                                         "model-hard.onnx",
                                         "notes-link",
                                         "st",
                                         "rk",
                                         "no/such/folder/out"};
  for (const auto& entry : commands) {
    const auto& command = entry.first; // not a structured binding: INFO captures it
    const auto& replaceable = entry.second;
    // The command works: a refusal below is about the path, nothing else.
    const auto ok = run_in(w.work, with(command, "fine.out"), w.scratch.path());
    INFO(command, "\n", ok.err);
    REQUIRE(ok.code == 0);
    fs::remove(w.work / "fine.out");
    fs::remove(w.work / "fresh.yaml");
    for (const auto& target : targets) {
      if (std::find(replaceable.begin(), replaceable.end(), target) == replaceable.end()) {
        expect_refused(w, with(command, target));
      }
    }
    struct stat st {};
    REQUIRE(::lstat("/dev/null", &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
  }
  // An input spelled through a link and "..": the file the kernel opens is
  // the one protected (a trial's shard overwrote its input so, and an output
  // so spelled was written where its text, not the link, pointed).
  expect_refused(w, "shard --input-model view/../../model.onnx --manual-sharding-config c.yaml "
                    "--output-model model.onnx");
  expect_refused(w, "shard --input-model view/../../model.onnx --manual-sharding-config c.yaml "
                    "--report none --output-model model-hard.onnx");
  expect_refused(w, "strip --input-model model.onnx --output-model view/../../model.onnx");
  // Without --force, merge keeps a user's file; with it, never one inside
  // the folders it reads.
  expect_refused(w, "weights merge --strategy-dir st --ranks-dir rk --output user/notes.txt");
  expect_refused(w,
                 "weights merge --strategy-dir st --ranks-dir rk --force --output st/stage0.ckpt");
  expect_refused(w, "weights merge --strategy-dir st --ranks-dir rk --force --output rk/new.st");
}

TEST_CASE("folder outputs: '.', '..', '/', inputs and their folders, a user's folder, a FIFO") {
  workspace w;
  const std::vector<std::string> commands{
      "split --input-model model.onnx --manual-sharding-config c.yaml --output-dir {}",
      "weights strategy --input-model model.onnx --manual-sharding-config c.yaml "
      "--tensor-parallel 2 --replicate-shared --output-dir {}",
      "weights split --input-model model.onnx --strategy-dir st --output-dir {}",
  };
  const std::vector<std::string> targets{".",          "..",         "/",     "./",
                                         "../work",    "user",       "user/", "fifo",
                                         "model.onnx", "notes-link", "/dev",  "/tmp"};
  for (const auto& command : commands) {
    const auto ok = run_in(w.work, with(command, "fresh"), w.scratch.path());
    INFO(command, "\n", ok.err);
    REQUIRE(ok.code == 0);
    fs::remove_all(w.work / "fresh");
    for (const auto& force : {"", " --force"}) {
      for (const auto& target : targets) {
        expect_refused(w, with(command, target) + force);
      }
    }
  }
  // The strategy folder weights split reads, and a folder inside it.
  for (const auto& target : {"st", "st/", "st/inner"}) {
    expect_refused(w, "weights split --input-model model.onnx --strategy-dir st --force "
                      "--output-dir " +
                          q(target));
  }
  // An input that is not there is said missing, not "held" by the folder
  // it would lie in; nothing is made.
  for (const auto& command : commands) {
    const auto missing = with(command, "new") + " ";
    const auto at = missing.find("model.onnx ");
    REQUIRE(at != std::string::npos);
    const auto args = std::string(missing).replace(at, 10, "new/model.onnx");
    const auto before = snapshot(w.root.path());
    const auto r = run_in(w.work, args, w.scratch.path());
    CAPTURE(args);
    CHECK(r.code == 2);
    CHECK(r.err == "shardpoint: error: 'new/model.onnx': no such file\n");
    CHECK(snapshot(w.root.path()) == before);
  }
  // A folder shardpoint wrote is replaced with --force; once a user's file
  // is put into it, it is not.
  w.must("split --input-model model.onnx --manual-sharding-config c.yaml --output-dir out");
  w.must("split --input-model model.onnx --manual-sharding-config c.yaml --output-dir out --force");
  write_file(w.work / "out" / "my-notes.txt", "mine\n");
  expect_refused(w, "split --input-model model.onnx --manual-sharding-config c.yaml "
                    "--output-dir out --force");
  // Nor once a file shardpoint wrote there is changed by hand.
  fs::remove(w.work / "out" / "my-notes.txt");
  w.must("split --input-model model.onnx --manual-sharding-config c.yaml --output-dir out --force");
  write_file(w.work / "out" / "pipeline.json", "{\"mine\": true}\n");
  expect_refused(w, "split --input-model model.onnx --manual-sharding-config c.yaml "
                    "--output-dir out --force");
  write_file(w.work / "rk" / "rank_0" / "checkpoint_0.ckpt", "trained further");
  expect_refused(w, "weights split --input-model model.onnx --strategy-dir st --force "
                    "--output-dir rk");
  // A folder replaced keeps its mode (a private folder stays private).
  fs::remove(w.work / "out" / "pipeline.json");
  fs::permissions(w.work / "out", fs::perms::owner_all);
  w.must("split --input-model model.onnx --manual-sharding-config c.yaml --output-dir out --force");
  CHECK(fs::status(w.work / "out").permissions() == fs::perms::owner_all);
  CHECK(fs::exists(w.work / "out" / "pipeline.json"));
}

TEST_CASE("read-only folders: nothing is written into them, by root either") {
  // A helper running as root made split's folder inside the 0555 folder of
  // shared models: root's writes ignore the mode, shardpoint does not.
  workspace w;
  fs::create_directory(w.work / "shelf");
  fs::copy_file(w.work / "model.onnx", w.work / "shelf" / "model.onnx");
  fs::create_directory(w.work / "locked"); // empty, read-only
  for (const auto* d : {"shelf", "locked"}) {
    fs::permissions(w.work / d, fs::perms(0555));
  }
  for (const auto& args : std::vector<std::string>{
           "split --input-model shelf/model.onnx --manual-sharding-config c.yaml "
           "--output-dir shelf/stages",
           "split --input-model model.onnx --manual-sharding-config c.yaml --output-dir locked",
           "split --input-model model.onnx --manual-sharding-config c.yaml --output-dir "
           "locked --force",
           "split --input-model model.onnx --manual-sharding-config c.yaml --output-dir "
           "locked/stages",
           "shard --input-model shelf/model.onnx --manual-sharding-config c.yaml "
           "--output-model shelf/sharded.onnx",
           "suggest --input-model model.onnx --stages 2 --output-config shelf/c.yaml",
           "weights strategy --input-model model.onnx --manual-sharding-config c.yaml "
           "--tensor-parallel 2 --replicate-shared --output-dir shelf/st",
           "synth decoder --layers 1 --hidden 8 locked/d.onnx",
       }) {
    expect_refused(w, args);
  }
  const auto r = run_in(w.work,
                        "shard --input-model model.onnx --manual-sharding-config c.yaml "
                        "--output-model shelf/sharded.onnx",
                        w.scratch.path());
  CHECK(r.err == "shardpoint: error: 'shelf/sharded.onnx': the output folder 'shelf' is "
                 "read-only (mode 0555); shardpoint does not write into it\n");
  // Writable again: written.
  fs::permissions(w.work / "shelf", fs::perms(0755));
  w.must("split --input-model shelf/model.onnx --manual-sharding-config c.yaml "
         "--output-dir shelf/stages");
  CHECK(fs::exists(w.work / "shelf" / "stages" / "pipeline.json"));
  fs::permissions(w.work / "locked", fs::perms(0755));
}

namespace {

// Runs `args` in `dir` once per instant in [0, the run's own duration), each
// time killed with `signal` after that long, and hands each result to
// `check`. Returns how many runs the signal ended.
template <class Check>
int kill_at_spread_instants(workspace& w, const std::string& args, const char* signal, int runs,
                            const std::string& reset, Check check) {
  // How long one run takes, unhindered: the shorter of two, so that a run
  // slowed by the machine's other work (ctest -j) does not spread the
  // instants past the end of every later run.
  double whole = 0;
  for (int i = 0; i < 2; ++i) {
    if (i > 0 && !reset.empty()) {
      w.must(reset);
    }
    const auto t0 = std::chrono::steady_clock::now();
    w.must(args);
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    whole = i == 0 ? t : std::min(whole, t);
  }
  int killed = 0;
  for (int i = 0; i < runs; ++i) {
    if (!reset.empty()) {
      w.must(reset);
    }
    char delay[32];
    std::snprintf(delay, sizeof delay, "%.4f", whole * 1.2 * (i + 1) / runs);
    const auto r = run_in(w.work, args, w.scratch.path(),
                          std::string("timeout -s ") + signal + " " + delay + " ");
    // timeout(1) exits 124 when it sent the signal and the command then
    // exited; 128 + 9 when SIGKILL ended it.
    killed += r.code == 124 || r.code == 137 || r.code == 130;
    INFO("signal ", signal, " after ", delay, " s: exit ", r.code, "\n", r.err);
    check(r);
  }
  return killed;
}

} // namespace

TEST_CASE("a kill mid-write leaves the old file or the new one; SIGINT leaves no temporary") {
  workspace w;
  w.must("synth decoder --layers 24 --hidden 256 --sequence 16 big.onnx");
  w.must("suggest --input-model big.onnx --stages 2 --output-config two.yaml");
  w.must("suggest --input-model big.onnx --stages 3 --output-config three.yaml");
  w.must("shard --input-model big.onnx --manual-sharding-config two.yaml --output-model old.onnx "
         "--report none");
  w.must("shard --input-model big.onnx --manual-sharding-config three.yaml --output-model "
         "new.onnx --report none");
  const auto old_bytes = read_file(w.work / "old.onnx");
  const auto new_bytes = read_file(w.work / "new.onnx");
  REQUIRE(old_bytes != new_bytes);
  const std::string reset = "shard --input-model big.onnx --manual-sharding-config two.yaml "
                            "--output-model out.onnx --report none";
  const std::string args = "shard --input-model big.onnx --manual-sharding-config three.yaml "
                           "--output-model out.onnx --report none";
  w.must(reset);
  std::vector<std::string> work_names;
  for (const auto& e : fs::directory_iterator(w.work)) {
    work_names.push_back(e.path().filename().string());
  }
  for (const char* signal : {"KILL", "INT"}) {
    const int killed = kill_at_spread_instants(w, args, signal, 8, reset, [&](const run_result&) {
      const auto now = read_file(w.work / "out.onnx");
      CHECK((now == old_bytes || now == new_bytes));
      for (const auto& name : new_names(w.work, work_names)) {
        CAPTURE(name);
        // SIGKILL may leave the named temporary; SIGINT removes it.
        CHECK(std::string(signal) == "KILL");
        CHECK(is_temporary_of(name, "out.onnx"));
        fs::remove(w.work / name);
      }
    });
    CAPTURE(signal);
    CHECK(killed > 0); // the instants reached the write, not only its end
  }
}

// Under a sanitizer each run is several times slower: fewer instants.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
#else
constexpr bool sanitized = false;
#endif

TEST_CASE("a kill mid-replacement leaves the old folder or the new one, whole") {
  // split --force replacing a folder of three stage models by one of two,
  // killed at 200 instants spread over the run (SIGKILL), and 20 (SIGINT).
  workspace w;
  w.must("synth decoder --layers 24 --hidden 128 --sequence 16 big.onnx");
  w.must("suggest --input-model big.onnx --stages 2 --output-config two.yaml");
  w.must("suggest --input-model big.onnx --stages 3 --output-config three.yaml");
  w.must("split --input-model big.onnx --manual-sharding-config two.yaml --output-dir old");
  w.must("split --input-model big.onnx --manual-sharding-config three.yaml --output-dir new");
  const auto old_tree = snapshot(w.work / "old");
  const auto new_tree = snapshot(w.work / "new");
  const std::string reset = "split --input-model big.onnx --manual-sharding-config two.yaml "
                            "--output-dir out --force";
  const std::string args = "split --input-model big.onnx --manual-sharding-config three.yaml "
                           "--output-dir out --force";
  w.must(reset);
  std::vector<std::string> work_names;
  for (const auto& e : fs::directory_iterator(w.work)) {
    work_names.push_back(e.path().filename().string());
  }
  for (const char* signal : {"KILL", "INT"}) {
    const int runs = std::string(signal) == "KILL" ? (sanitized ? 25 : 200) : (sanitized ? 8 : 20);
    const int killed =
        kill_at_spread_instants(w, args, signal, runs, reset, [&](const run_result&) {
          const auto now = snapshot(w.work / "out");
          CHECK((now == old_tree || now == new_tree));
          for (const auto& name : new_names(w.work, work_names)) {
            CAPTURE(name);
            CHECK(std::string(signal) == "KILL");
            CHECK(is_temporary_of(name, "out"));
            fs::remove_all(w.work / name);
          }
        });
    CAPTURE(signal);
    CHECK(killed > 0);
  }
}
